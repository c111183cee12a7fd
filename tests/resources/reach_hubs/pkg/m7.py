import torch
REG = {}
def register(f):
    REG[f.__name__]=f
    return f
from pkg.m6 import f6, Base6

def f7(fast=False, dev=None):
    if fast:
        return fast7()
    if dev is None:
        return nodev7()
    return slow7()

def fast7():
    return f6()

def nodev7():
    torch.cuda.synchronize()
    return Model7()

def slow7():
    return Model7()

class Base7(Base6):
    def forward(self):
        return helper7()

class Model7(Base7):
    def __init__(self, use_amp=False):
        self.use_amp = use_amp
    def step(self):
        if self.use_amp:
            return amp7()
        return 1

class Cfg7:
    def __init__(self, mode=None):
        self.mode = mode
    def go(self):
        if self.mode is None:
            return nomode7()
        return mode7()

def amp7(): return 1
def nomode7(): return 1
def mode7(): return 1
def helper7(): return 1
def unused7(): return 2

@register
def registered7():
    return reg_helper7()
def reg_helper7(): return 3

@register
class RegCls7(Base7):
    pass

def guarded_target7(): return 4

if __name__ == '__main__':
    guarded_target7()
