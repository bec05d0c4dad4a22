

def test_a_curve_that_comes_back_after_its_reach_says_where_and_where_it_falls_for_good():
    from model_utils.core.reach import comeback

    distances = [512, 6850, 7025, 9216, 12288, 14336, 16000]
    # yarn-rope's shape on the bundled probe: down at 7,025, back at 9,216, down for good from 14,336
    assert comeback(distances, [2.6, 2.1, 0.98, 2.34, 1.38, 0.18, 0.10]) == (9216, (12288, 14336))
    assert comeback(distances, [2.6, 2.1, 0.98, 2.34, 1.38, 1.5, 1.4]) == (9216, None)  # still above at the end
    assert comeback(distances, [2.6, 2.1, 0.98, 0.5, 0.4, 0.3, 0.2]) is None  # stays down
    assert comeback(distances, [2.6, 2.5, 2.4, 2.3, 2.2, 2.1, 2.0]) is None  # no reach
