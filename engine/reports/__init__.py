"""An attack's results and reports: what ``brittle report`` rebuilds from ``results.jsonl``.

``results`` is the schema of the result rows, ``predictions`` the compact form in which
a row stores what each probe predicted, ``report`` the summary, Markdown and plots, and
``html_report`` the self-contained ``report.html`` (its style and script,
``report.css`` and ``report.js``, sit next to it and ship with the package).
"""
