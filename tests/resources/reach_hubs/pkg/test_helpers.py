import libentry

def test_x():
    pass
