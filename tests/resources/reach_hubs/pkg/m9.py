import torch
REG = {}
def register(f):
    REG[f.__name__]=f
    return f
from pkg.m8 import f8, Base8

def f9(fast=False, dev=None):
    if fast:
        return fast9()
    if dev is None:
        return nodev9()
    return slow9()

def fast9():
    return f8()

def nodev9():
    torch.cuda.synchronize()
    return Model9()

def slow9():
    return Model9()

class Base9(Base8):
    def forward(self):
        return helper9()

class Model9(Base9):
    def __init__(self, use_amp=False):
        self.use_amp = use_amp
    def step(self):
        if self.use_amp:
            return amp9()
        return 1

class Cfg9:
    def __init__(self, mode=None):
        self.mode = mode
    def go(self):
        if self.mode is None:
            return nomode9()
        return mode9()

def amp9(): return 1
def nomode9(): return 1
def mode9(): return 1
def helper9(): return 1
def unused9(): return 2

@register
def registered9():
    return reg_helper9()
def reg_helper9(): return 3

@register
class RegCls9(Base9):
    pass

def guarded_target9(): return 4

f9()
Model9().step()
Cfg9().go()

if __name__ == '__main__':
    guarded_target9()
