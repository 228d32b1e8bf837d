# Placeholder until the Kokkos backend lands: finds no Kokkos.
set(PCNN_KOKKOS_FOUND FALSE)
