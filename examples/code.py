import math


def area(r):
    """A circle's area."""
    return math.pi * r ** 2


class Circle:
    """A circle on the plane."""
    def __init__(self, r):
        self.r = r

    def area(self):
        return area(self.r)
