
def available(get, fallback):
    try:
        return get()
    except (AttributeError, RuntimeError):
        return fallback


