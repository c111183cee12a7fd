import torch
REG = {}
def register(f):
    REG[f.__name__]=f
    return f
from pkg.m4 import f4, Base4

def f5(fast=False, dev=None):
    if fast:
        return fast5()
    if dev is None:
        return nodev5()
    return slow5()

def fast5():
    return f4()

def nodev5():
    torch.cuda.synchronize()
    return Model5()

def slow5():
    return Model5()

class Base5(Base4):
    def forward(self):
        return helper5()

class Model5(Base5):
    def __init__(self, use_amp=False):
        self.use_amp = use_amp
    def step(self):
        if self.use_amp:
            return amp5()
        return 1

class Cfg5:
    def __init__(self, mode=None):
        self.mode = mode
    def go(self):
        if self.mode is None:
            return nomode5()
        return mode5()

def amp5(): return 1
def nomode5(): return 1
def mode5(): return 1
def helper5(): return 1
def unused5(): return 2

@register
def registered5():
    return reg_helper5()
def reg_helper5(): return 3

@register
class RegCls5(Base5):
    pass

def guarded_target5(): return 4

if __name__ == '__main__':
    guarded_target5()
