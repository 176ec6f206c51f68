"""Where a command goes and what its reply means on the wire, with no I/O: key naming and
hash slots (`naming`), topology views and how each mode discovers them (`topology`,
`discovery`, `modes`, `manager_base`), pools and subscriptions (`pool_registry`,
`subscriptions`), the re-send rules (`wire`) and errors (`failures`, `refusals`).
Imports only `redisson_py.core.effects` of the core."""
