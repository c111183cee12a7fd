import pkg
from pkg.m0 import f0, Model0, Cfg0, guarded_target0
f0()
Model0().step()
Cfg0().go()

if __name__ == '__main__':
    guarded_target0()
