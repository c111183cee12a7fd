import pkg
from pkg.m2 import f2, Model2, Cfg2, guarded_target2
f2(dev='cuda')
Model2().step()
Cfg2().go()

if __name__ == '__main__':
    guarded_target2()
