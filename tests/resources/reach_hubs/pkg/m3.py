import torch
REG = {}
def register(f):
    REG[f.__name__]=f
    return f
from pkg.m2 import f2, Base2
import script_a

def f3(fast=False, dev=None):
    if fast:
        return fast3()
    if dev is None:
        return nodev3()
    return slow3()

def fast3():
    return f2()

def nodev3():
    torch.cuda.synchronize()
    return Model3()

def slow3():
    return Model3()

class Base3(Base2):
    def forward(self):
        return helper3()

class Model3(Base3):
    def __init__(self, use_amp=False):
        self.use_amp = use_amp
    def step(self):
        if self.use_amp:
            return amp3()
        return 1

class Cfg3:
    def __init__(self, mode=None):
        self.mode = mode
    def go(self):
        if self.mode is None:
            return nomode3()
        return mode3()

def amp3(): return 1
def nomode3(): return 1
def mode3(): return 1
def helper3(): return 1
def unused3(): return 2

@register
def registered3():
    return reg_helper3()
def reg_helper3(): return 3

@register
class RegCls3(Base3):
    pass

def guarded_target3(): return 4

f3()
Model3().step()
Cfg3().go()

if __name__ == '__main__':
    guarded_target3()
