"""The hosted platform: client faces, transport, resources, credentials, device login,
git pinning and eval configs. Modules are imported on demand (CLI start-up stays cheap)."""
