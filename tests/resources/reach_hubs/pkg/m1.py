import torch
REG = {}
def register(f):
    REG[f.__name__]=f
    return f
from pkg.m0 import f0, Base0

def f1(fast=False, dev=None):
    if fast:
        return fast1()
    if dev is None:
        return nodev1()
    return slow1()

def fast1():
    return f0()

def nodev1():
    torch.cuda.synchronize()
    return Model1()

def slow1():
    return Model1()

class Base1(Base0):
    def forward(self):
        return helper1()

class Model1(Base1):
    def __init__(self, use_amp=False):
        self.use_amp = use_amp
    def step(self):
        if self.use_amp:
            return amp1()
        return 1

class Cfg1:
    def __init__(self, mode=None):
        self.mode = mode
    def go(self):
        if self.mode is None:
            return nomode1()
        return mode1()

def amp1(): return 1
def nomode1(): return 1
def mode1(): return 1
def helper1(): return 1
def unused1(): return 2

@register
def registered1():
    return reg_helper1()
def reg_helper1(): return 3

@register
class RegCls1(Base1):
    pass

def guarded_target1(): return 4

if __name__ == '__main__':
    guarded_target1()
