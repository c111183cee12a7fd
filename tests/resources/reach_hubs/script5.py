import pkg
from pkg.m5 import f5, Model5, Cfg5, guarded_target5
f5(dev=1)
Model5(use_amp=True).step()
Cfg5().go()

if __name__ == '__main__':
    guarded_target5()
