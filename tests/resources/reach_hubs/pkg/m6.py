import torch
REG = {}
def register(f):
    REG[f.__name__]=f
    return f
from pkg.m5 import f5, Base5

def f6(fast=False, dev=None):
    if fast:
        return fast6()
    if dev is None:
        return nodev6()
    return slow6()

def fast6():
    return f5()

def nodev6():
    torch.cuda.synchronize()
    return Model6()

def slow6():
    return Model6()

class Base6(Base5):
    def forward(self):
        return helper6()

class Model6(Base6):
    def __init__(self, use_amp=False):
        self.use_amp = use_amp
    def step(self):
        if self.use_amp:
            return amp6()
        return 1

class Cfg6:
    def __init__(self, mode=None):
        self.mode = mode
    def go(self):
        if self.mode is None:
            return nomode6()
        return mode6()

def amp6(): return 1
def nomode6(): return 1
def mode6(): return 1
def helper6(): return 1
def unused6(): return 2

@register
def registered6():
    return reg_helper6()
def reg_helper6(): return 3

@register
class RegCls6(Base6):
    pass

def guarded_target6(): return 4

f6()
Model6().step()
Cfg6().go()

if __name__ == '__main__':
    guarded_target6()
