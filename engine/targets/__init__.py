"""What an attack damages besides probes: a dependency parser (``parser``), and the
evaluator that scores probes and such targets on the same candidates (``combined``)."""
