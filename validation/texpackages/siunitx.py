"""siunitx: numbers, units and quantities (``\\SI{3}{\\kilo\\metre}`` is ``3 km``).

Read from the siunitx manual (``siunitx.pdf``, version 3, CTAN macros/latex/contrib/siunitx):
section 3 "Numbers" (``\\num``: ``e`` is ``× 10^``, ``+-`` is ``±``), section 4 "Units" and its
tables of SI base units, coherent derived units, units accepted for use with the SI, other
non-SI units and SI prefixes (the symbols below), section 4.2 "Powers" (``\\per``,
``\\square``, ``\\squared``, ``\\cubic``, ``\\cubed``, ``\\tothe``, ``\\raiseto``) and the
version-2 commands the manual keeps (``\\SI``, ``\\si``, ``\\SIrange``). A quantity prints its
number, a space and its units, the units separated by a space and ``\\per`` printed as a
negative power (the default ``per-mode = power``). Digits are not regrouped: grouping is
typography, and the same digits say the same number.
"""

SOURCE = "siunitx.pdf (siunitx 3), CTAN macros/latex/contrib/siunitx, sections 3 and 4"

_UNITS = {
    # SI base units
    "metre": "m", "meter": "m", "gram": "g", "kilogram": "kg", "second": "s", "ampere": "A",
    "kelvin": "K", "mole": "mol", "candela": "cd",
    # Coherent derived units
    "radian": "rad", "steradian": "sr", "hertz": "Hz", "newton": "N", "pascal": "Pa",
    "joule": "J", "watt": "W", "coulomb": "C", "volt": "V", "farad": "F", "ohm": "Ω",
    "siemens": "S", "weber": "Wb", "tesla": "T", "henry": "H", "degreeCelsius": "°C",
    "lumen": "lm", "lux": "lx", "becquerel": "Bq", "gray": "Gy", "sievert": "Sv", "katal": "kat",
    # Units accepted for use with the SI, and other non-SI units the manual lists
    "minute": "min", "hour": "h", "day": "d", "astronomicalunit": "au", "degree": "°",
    "arcminute": "′", "arcsecond": "″", "hectare": "ha", "litre": "L", "liter": "L",
    "tonne": "t", "dalton": "Da", "electronvolt": "eV", "atomicmassunit": "u", "neper": "Np",
    "bel": "B", "decibel": "dB", "percent": "%", "angstrom": "Å", "bar": "bar", "barn": "b",
    "bohr": "a₀", "hartree": "Eₕ", "mmHg": "mmHg", "knot": "kn", "nauticalmile": "M",
    "clight": "c₀", "planckbar": "ℏ", "elementarycharge": "e", "electronmass": "mₑ",
}  # fmt: skip
_PREFIXES = {
    "quecto": "q", "ronto": "r", "yocto": "y", "zepto": "z", "atto": "a", "femto": "f",
    "pico": "p", "nano": "n", "micro": "μ", "milli": "m", "centi": "c", "deci": "d",
    "deca": "da", "deka": "da", "hecto": "h", "kilo": "k", "mega": "M", "giga": "G",
    "tera": "T", "peta": "P", "exa": "E", "zetta": "Z", "yotta": "Y", "ronna": "R",
    "quetta": "Q",
}  # fmt: skip
# Powers: what each does to the unit before or after it (the converter's "power" kind).
_POWERS = [
    ("per", "s⁻¹", "power", "\\si{\\per\\second}"),
    ("square", "m²", "power", "\\si{\\square\\metre}"),
    ("squared", "m²", "power", "\\si{\\metre\\squared}"),
    ("cubic", "m³", "power", "\\si{\\cubic\\metre}"),
    ("cubed", "m³", "power", "\\si{\\metre\\cubed}"),
    ("tothe", "m⁴", "power", "\\si{\\metre\\tothe{4}}"),
    ("raiseto", "m⁴", "power", "\\si{\\raiseto{4}\\metre}"),
]
_COMMANDS = [
    ("SI", "3 km", "quantity", "\\SI{3}{\\kilo\\metre}"),
    ("qty", "9.8 m s⁻²", "quantity", "\\qty{9.8}{\\metre\\per\\second\\squared}"),
    ("si", "km s⁻¹", "units", "\\si{\\kilo\\metre\\per\\second}"),
    ("unit", "kg m", "units", "\\unit{\\kilogram\\metre}"),
    ("num", "1.5 × 10⁻³", "number", "\\num{1.5e-3}"),
    ("SIrange", "10 K to 20 K", "range", "\\SIrange{10}{20}{\\kelvin}"),
    ("qtyrange", "10 K to 20 K", "range", "\\qtyrange{10}{20}{\\kelvin}"),
    ("numrange", "1 to 2", "range", "\\numrange{1}{2}"),
    ("ang", "10°", "angle", "\\ang{10}"),
]
PACKAGE = "siunitx"
ROWS = (
    [(n, s, "unit", f"\\si{{\\{n}}}") for n, s in _UNITS.items()]
    + [(n, f"{s}m", "prefix", f"\\si{{\\{n}\\metre}}") for n, s in _PREFIXES.items()]
    + _POWERS
    + _COMMANDS
)
UNITS = _UNITS
PREFIXES = _PREFIXES
