import torch
REG = {}
def register(f):
    REG[f.__name__]=f
    return f
from pkg.m3 import f3, Base3

def f4(fast=False, dev=None):
    if fast:
        return fast4()
    if dev is None:
        return nodev4()
    return slow4()

def fast4():
    return f3()

def nodev4():
    torch.cuda.synchronize()
    return Model4()

def slow4():
    return Model4()

class Base4(Base3):
    def forward(self):
        return helper4()

class Model4(Base4):
    def __init__(self, use_amp=False):
        self.use_amp = use_amp
    def step(self):
        if self.use_amp:
            return amp4()
        return 1

class Cfg4:
    def __init__(self, mode=None):
        self.mode = mode
    def go(self):
        if self.mode is None:
            return nomode4()
        return mode4()

def amp4(): return 1
def nomode4(): return 1
def mode4(): return 1
def helper4(): return 1
def unused4(): return 2

@register
def registered4():
    return reg_helper4()
def reg_helper4(): return 3

@register
class RegCls4(Base4):
    pass

def guarded_target4(): return 4

if __name__ == '__main__':
    guarded_target4()
