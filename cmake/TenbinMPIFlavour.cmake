# TenbinMPIFlavour.cmake - tell Open MPI from MPICH after find_package(MPI).
#
# Used both by the tenbin build and by the installed tenbinConfig.cmake, so the
# two classify an MPI installation the same way.  Set
# MPI_DETERMINE_LIBRARY_VERSION to TRUE before find_package(MPI) so that
# FindMPI fills MPI_C_LIBRARY_VERSION_STRING (it runs MPI_Get_library_version).
#
#   tenbin_mpi_flavour(<out-var>)
#
# sets <out-var> to "openmpi", "mpich" or "other".  The library version
# string is checked first; when FindMPI could not determine it (for example
# when cross-compiling) the mpi.h found in MPI_C_INCLUDE_DIRS is inspected.

include_guard(GLOBAL)

function(tenbin_mpi_flavour out_var)
  set(_flavour "other")
  set(_ver "${MPI_C_LIBRARY_VERSION_STRING}")
  if(_ver MATCHES "Open MPI")
    set(_flavour "openmpi")
  elseif(_ver MATCHES "MPICH")
    set(_flavour "mpich")
  elseif(NOT _ver OR _ver STREQUAL "NOTFOUND")
    # No runtime answer: look at the header instead.
    foreach(_dir IN LISTS MPI_C_INCLUDE_DIRS MPI_C_HEADER_DIR)
      if(EXISTS "${_dir}/mpi.h")
        file(STRINGS "${_dir}/mpi.h" _hits REGEX "define[ \t]+(OMPI_MAJOR_VERSION|MPICH_VERSION)[ \t]")
        if(_hits MATCHES "OMPI_MAJOR_VERSION")
          set(_flavour "openmpi")
        elseif(_hits MATCHES "MPICH_VERSION")
          set(_flavour "mpich")
        endif()
        break()
      endif()
    endforeach()
  endif()
  set(${out_var} "${_flavour}" PARENT_SCOPE)
endfunction()
