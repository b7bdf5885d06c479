"""Local runs at the terminal: eval run and its seed form, suites, watch, init — their
options, execution and what they show."""
