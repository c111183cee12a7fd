import pkg
from pkg.m4 import f4, Model4, Cfg4, guarded_target4
f4(fast=False, dev=None)
Model4().step()
Cfg4(mode=1).go()

if __name__ == '__main__':
    guarded_target4()
