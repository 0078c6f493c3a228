__all__ = __import__("datagauntlet.frontdoors.vf").frontdoors.vf.export(__name__, globals())
