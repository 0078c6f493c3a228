"""Front doors: ways for an agent outside this package to play an environment.

- `loop` / `evaluate`: an agent loop against any OpenAI-compatible endpoint (`datagauntlet eval`).
- `mock_model`: a scripted model (one of an env's policies) behind a real endpoint.
- `mcp_server`: one episode's tools over the Model Context Protocol (`datagauntlet mcp`).
- `vf`: verifiers 0.4 tasksets (`vf-eval dirty-integration ...`).

Every front door reaches environments through the registry only. Their dependencies (openai,
mcp, verifiers) are optional extras, imported inside the module that needs them; importing
this package imports none of them.
"""
