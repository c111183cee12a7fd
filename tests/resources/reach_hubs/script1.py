import pkg
from pkg.m1 import f1, Model1, Cfg1, guarded_target1
f1(fast=True)
Model1(use_amp=True).step()
Cfg1().go()

if __name__ == '__main__':
    guarded_target1()
