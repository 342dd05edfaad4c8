"""One version order for every place that picks the newest rules file."""
from gate.language.versions import newest, version_key


def test_numbers_compare_as_numbers_not_text():
    assert newest(["v2.9.yaml", "v2.10.yaml", "v2.1.yaml"]) == "v2.10.yaml"
    assert sorted(["v2.10.yaml", "v2.2.yaml", "v10.0.yaml"], key=version_key) == ["v2.2.yaml", "v2.10.yaml", "v10.0.yaml"]


def test_names_of_other_shapes_sort_without_error():
    # A stray file beside the revisions must not make the comparison of a number with text raise.
    names = ["v2.3.yaml", "notes.yml", "2.0.yaml", "v2.3.1.yaml", "v2.yaml"]
    assert newest(names) == "v2.3.1.yaml"
    assert sorted(names, key=version_key) == ["2.0.yaml", "notes.yml", "v2.yaml", "v2.3.yaml", "v2.3.1.yaml"]
