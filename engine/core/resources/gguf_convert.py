"""Turning a GGUF checkpoint into a float32 transformers directory, once.

``transformers`` reads GGUF files but keeps them quantised and slow to load; the
converted directory (``config.json``, ``model.safetensors``, tokenizer files and a
marker recording what was converted) loads in about a second. torch and transformers
(and through them gguf and accelerate) are imported only while converting.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from brittle.engine.core.atomic import atomic_directory
from brittle.engine.core.resources.home import hf_offline, notify

#: Marker file written last into a converted directory.
MODEL_MARKER = ".brittle-model.json"


def is_converted(directory: Path) -> bool:
    """Whether ``directory`` holds a complete conversion (model, tokenizer and marker)."""
    needed = ("config.json", "model.safetensors", "tokenizer.json", MODEL_MARKER)
    return all((directory / name).is_file() for name in needed)


def convert_gguf(gguf: Path, target: Path) -> Path:
    """De-quantise ``gguf`` to float32 and save model + tokenizer to ``target`` atomically.

    The directory is built next to ``target`` and renamed into place; a complete
    conversion another process finished meanwhile is kept. Prints a message before and
    after (the conversion of SmolLM2-135M takes about 40 s); returns ``target``.
    """
    notify(
        f"Converting the bundled {gguf.name} to float32 transformers weights "
        f"in {target} (one time, about 40 s)..."
    )
    started = time.perf_counter()
    with atomic_directory(target, is_complete=is_converted) as staging:
        with hf_offline():
            # Deferred: torch and transformers are heavy libraries, needed only here.
            import torch
            import transformers
            from transformers import AutoModelForCausalLM, AutoTokenizer

            tokenizer = AutoTokenizer.from_pretrained(
                str(gguf.parent),
                gguf_file=gguf.name,
                local_files_only=True,
                trust_remote_code=False,
            )
            model = AutoModelForCausalLM.from_pretrained(
                str(gguf.parent),
                gguf_file=gguf.name,
                dtype=torch.float32,
                local_files_only=True,
                trust_remote_code=False,
            )
            model.hf_quantizer = None  # type: ignore[assignment]  # drop the GGUF quantizer
            if hasattr(model.config, "quantization_config"):
                del model.config.quantization_config
            model.save_pretrained(str(staging))
            tokenizer.save_pretrained(str(staging))
            del model
        marker = {
            "source": str(gguf),
            "source_bytes": gguf.stat().st_size,
            "dtype": "float32",
            "transformers": transformers.__version__,
            "torch": torch.__version__,
            "converted": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        }
        (staging / MODEL_MARKER).write_text(json.dumps(marker, indent=1) + "\n", encoding="utf-8")
    notify(f"SmolLM2 converted in {time.perf_counter() - started:.0f} s: {target}")
    return target
