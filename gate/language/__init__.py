"""The rule language: a rules file to a validated revision.

Owns YAML with positions (yamlsource), the JSON Schema check (schema), the loader and its model,
the policy id (a hash of the behaviour-bearing content the loader hands it), pattern references and
vocabularies (patterns), rules read from git revisions (gitrev), and finding a file by policy id
(history). The bottom layer: it imports nothing else of gate.
"""
