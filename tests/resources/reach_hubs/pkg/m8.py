import torch
REG = {}
def register(f):
    REG[f.__name__]=f
    return f
from pkg.m7 import f7, Base7

def f8(fast=False, dev=None):
    if fast:
        return fast8()
    if dev is None:
        return nodev8()
    return slow8()

def fast8():
    return f7()

def nodev8():
    torch.cuda.synchronize()
    return Model8()

def slow8():
    return Model8()

class Base8(Base7):
    def forward(self):
        return helper8()

class Model8(Base8):
    def __init__(self, use_amp=False):
        self.use_amp = use_amp
    def step(self):
        if self.use_amp:
            return amp8()
        return 1

class Cfg8:
    def __init__(self, mode=None):
        self.mode = mode
    def go(self):
        if self.mode is None:
            return nomode8()
        return mode8()

def amp8(): return 1
def nomode8(): return 1
def mode8(): return 1
def helper8(): return 1
def unused8(): return 2

@register
def registered8():
    return reg_helper8()
def reg_helper8(): return 3

@register
class RegCls8(Base8):
    pass

def guarded_target8(): return 4

if __name__ == '__main__':
    guarded_target8()
