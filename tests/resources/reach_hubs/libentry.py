import pkg
from pkg.m2 import f2

def lib_api(flag=False):
    if flag:
        return lib_flag()
    return f2(fast=True)

def lib_flag(): return 1
