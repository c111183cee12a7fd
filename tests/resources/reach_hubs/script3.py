import pkg
from pkg.m3 import f3, Model3, Cfg3, guarded_target3
f3()
Model3(use_amp=True).step()
Cfg3().go()

if __name__ == '__main__':
    guarded_target3()
