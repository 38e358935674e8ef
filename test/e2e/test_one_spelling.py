"""One spelling of every settings flag, through the real binary: `run`, `repro` and `shrink` list exactly the flags
of the settings table (src/settings/run_settings.cpp; runner_tests walks the table itself), and `repro` reads the
flags given back through it, so a bundle's recorded device flags stay when another setting is given."""
import re
import shlex

from conftest import case, opcheck, write_manifest

EXP_FAULT = {"OPCHECK_LOOPBACK_FAULTS": "aten::exp=bias:1e-2"}


def help_flags(*command):
    r = opcheck(*command, "--help")
    assert r.rc == 0, r
    return set(re.findall(r"^\s+(?:-\w, ?)?(--[a-z][a-z-]*)", r.out, re.M))


def test_run_repro_and_shrink_list_the_settings_flags_of_the_table_and_no_other_shared_one():
    # shrink registers no flag of its own beyond the selection and the table, so the flags all three commands list
    # beyond the selection (list-cases has those) are the table's; each of the settings named here must be one.
    run, repro, shrink = help_flags("run"), help_flags("repro"), help_flags("shrink")
    selection = help_flags("list-cases") | {"--help", "--config"}
    table = (run & repro & shrink) - selection
    assert {"--device", "--device-lib", "--device-import", "--device-name", "--reference-dtype", "--repeat",
            "--timeout", "--start-timeout", "--max-case-bytes", "--module-memory-budget", "--compile-backend",
            "--reference-cache", "--reference-cache-size", "--reference-cache-max-entry",
            "--require-backend"} <= table, table
    # What run and repro share beyond the selection is that table: a settings flag registered by hand in run and
    # repro, and not through the table, would be missing from shrink and show here.
    assert (run & repro) - selection == table, ((run & repro) - selection) ^ table


def test_repro_of_a_bundle_with_a_reference_cache_uses_it_and_keeps_the_bundles_device(tmp_path):
    manifest = write_manifest(tmp_path / "m.yaml", "m", [case("exp.1", "torch.exp", [[4]])])
    ran = opcheck("run", "--manifests", manifest, "--device", "loopback", "--repeat", "3", "--save-failures",
                  tmp_path / "bundles", "--artifact-dir", tmp_path / "a", env=EXP_FAULT)
    assert ran.rc == 1, ran
    refs = tmp_path / "refs"
    printed = opcheck("repro", "m::exp.1", "--bundle", tmp_path / "bundles", "--reference-cache", refs)
    assert printed.rc == 0, printed
    words = shlex.split(printed.out.strip().splitlines()[-1])
    assert words[words.index("--reference-cache") + 1] == str(refs), words
    assert words[words.index("--device") + 1] == "loopback" and words[words.index("--repeat") + 1] == "3", words
    # A flag given replaces the bundle's: --repeat 1 here, the device still the bundle's.
    again = opcheck("repro", "m::exp.1", "--bundle", tmp_path / "bundles", "--repeat", "1")
    words = shlex.split(again.out.strip().splitlines()[-1])
    assert words.count("--repeat") == 1 and words[words.index("--repeat") + 1] == "1", words
    assert words[words.index("--device") + 1] == "loopback", words
