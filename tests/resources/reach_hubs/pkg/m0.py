import torch
REG = {}
def register(f):
    REG[f.__name__]=f
    return f

def f0(fast=False, dev=None):
    if fast:
        return fast0()
    if dev is None:
        return nodev0()
    return slow0()

def fast0():
    return 0

def nodev0():
    torch.cuda.synchronize()
    return Model0()

def slow0():
    return Model0()

class Base0:
    def forward(self):
        return helper0()

class Model0(Base0):
    def __init__(self, use_amp=False):
        self.use_amp = use_amp
    def step(self):
        if self.use_amp:
            return amp0()
        return 1

class Cfg0:
    def __init__(self, mode=None):
        self.mode = mode
    def go(self):
        if self.mode is None:
            return nomode0()
        return mode0()

def amp0(): return 1
def nomode0(): return 1
def mode0(): return 1
def helper0(): return 1
def unused0(): return 2

@register
def registered0():
    return reg_helper0()
def reg_helper0(): return 3

@register
class RegCls0(Base0):
    pass

def guarded_target0(): return 4

f0()
Model0().step()
Cfg0().go()

if __name__ == '__main__':
    guarded_target0()
