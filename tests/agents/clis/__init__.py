"""The launch recipes of the real CLIs (one module each; see ../bed.py)."""

from pathlib import Path


def home_env(home: Path) -> dict:
    """HOME and the XDG dirs inside the throwaway `home`, created: every CLI keeps its config,
    caches and state there, never in the real user's."""
    dirs = {
        "XDG_CONFIG_HOME": home / ".config",
        "XDG_DATA_HOME": home / ".local" / "share",
        "XDG_STATE_HOME": home / ".local" / "state",
        "XDG_CACHE_HOME": home / ".cache",
    }
    for path in dirs.values():
        path.mkdir(parents=True, exist_ok=True)
    return {"HOME": str(home)} | {name: str(path) for name, path in dirs.items()}
