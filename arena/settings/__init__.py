"""The settings layer: validated, frozen rules (:mod:`arena.settings.rules`),
run configs (:mod:`arena.settings.config`), bot references
(:mod:`arena.settings.botref`) and ``arena analyze``'s settings
(:mod:`arena.settings.analysis`), and the TOML formats of them.

The rules presets and example configs travel as package data in
``arena/presets/`` and ``arena/configs/``.
"""
