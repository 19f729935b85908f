"""Subject-verb agreement under attractors (after Chaves & Richter).

- :mod:`~brittle.engine.agreement.lexicon`: the controlled lexicon;
- :mod:`~brittle.engine.agreement.stimuli`: the grammar, the design and its CoNLL-U;
- :mod:`~brittle.engine.agreement.lm_scoring`: surprisal of both verb forms under a
  causal or masked language model;
- :mod:`~brittle.engine.agreement.analysis`: accuracies, paired t-tests and tables;
- :mod:`~brittle.engine.agreement.search`: the worst-case stimulus search;
- :mod:`~brittle.engine.agreement.probing`: probes on the stimuli.
"""
