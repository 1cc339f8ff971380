"""featurehub: feature manager, administration and interface-configuration services."""
