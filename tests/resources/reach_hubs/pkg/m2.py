import torch
REG = {}
def register(f):
    REG[f.__name__]=f
    return f
from pkg.m1 import f1, Base1

def f2(fast=False, dev=None):
    if fast:
        return fast2()
    if dev is None:
        return nodev2()
    return slow2()

def fast2():
    return f1()

def nodev2():
    torch.cuda.synchronize()
    return Model2()

def slow2():
    return Model2()

class Base2(Base1):
    def forward(self):
        return helper2()

class Model2(Base2):
    def __init__(self, use_amp=False):
        self.use_amp = use_amp
    def step(self):
        if self.use_amp:
            return amp2()
        return 1

class Cfg2:
    def __init__(self, mode=None):
        self.mode = mode
    def go(self):
        if self.mode is None:
            return nomode2()
        return mode2()

def amp2(): return 1
def nomode2(): return 1
def mode2(): return 1
def helper2(): return 1
def unused2(): return 2

@register
def registered2():
    return reg_helper2()
def reg_helper2(): return 3

@register
class RegCls2(Base2):
    pass

def guarded_target2(): return 4

if __name__ == '__main__':
    guarded_target2()
