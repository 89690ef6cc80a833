"""Hand-written Construct schemas, one module per revision: they parse and build.

The .ksy files in spec/ are normative; these schemas say the same thing in Construct, which,
unlike the Kaitai compiler's JavaScript build, can build (write) bytes.
tests/spec/test_differential_tables.py checks that both agree with the library on every file the
tests make.
"""
