"""A miniature PARSEC 3.0 release, in the suite's layout, written by the tests.

Two archives like the official ones: the core (package sources, build and
run configurations, the test inputs) and the simulation inputs (simsmall and
simmedium). Its programs are small and check their own result, so a run
that exits 0 computed the right thing:

- ``pkgs/apps/blackscholes``: a C program built by a PARSEC-style Makefile
  (``version=pthreads`` from build_env); it sums the numbers of its input
  file with N threads inside the ROI hooks, writes the sum to its output
  file and compares it with the total the input states;
- ``ext/splash2x/kernels/fft``: a SPLASH-2x-style kernel: ``.C`` sources
  through m4 with the parmacs macros, a ``run.sh`` that picks the arguments
  by input set and generates its input file from a template with sed;
- ``pkgs/apps/x264`` (configure build) and ``pkgs/apps/ferret`` (needs
  gsl): what the recipe must refuse by name.

Nothing here is PARSEC code: the layout and the configuration variables
are the suite's, the programs are the tests' own.
"""

import io
import tarfile
from pathlib import Path

TOP = "parsec-3.0"

HOOKS_H = """\
#ifndef MINI_HOOKS_H
#define MINI_HOOKS_H
#ifdef __cplusplus
extern "C" {
#endif
enum __parsec_benchmark { __parsec_blackscholes, __splash2_fft };
void __parsec_bench_begin(enum __parsec_benchmark __bench);
void __parsec_bench_end();
void __parsec_roi_begin();
void __parsec_roi_end();
#ifdef __cplusplus
}
#endif
#endif
"""

PARMACS_MAKEFILE = """\
PREFIX=${PARSECDIR}/pkgs/libs/parmacs/inst/${PARSECPLAT}
all:
\t@true
install:
\tmkdir -p $(PREFIX)
\tcp -rf * $(PREFIX)
\trm $(PREFIX)/Makefile
"""

PARMACS_M4 = """\
define(MAIN_ENV, `#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>')
define(SUM_TYPE, `unsigned long long')
"""

INPLACE_BLDCONF = """\
build_deps="{deps}"
build_env="version=pthreads"
build_inplace="TRUE"
build_conf=""
"""

HOOKS_BLDCONF = """\
source ${{PARSECDIR}}/{pkg}/parsec/gcc.bldconf
build_deps="${{build_deps}} hooks"
"""

BS_MAKEFILE = """\
PREFIX=${PARSECDIR}/pkgs/apps/blackscholes/inst/${PARSECPLAT}
TARGET=blackscholes
ifdef version
  ifeq "$(version)" "pthreads"
    MT = -DENABLE_THREADS -pthread
  endif
endif
all: $(TARGET)
$(TARGET): sum.c
\t$(CC) $(CFLAGS) $(MT) sum.c -o $(TARGET) $(LDFLAGS) $(LIBS)
install:
\tmkdir -p $(PREFIX)/bin
\tcp -f $(TARGET) $(PREFIX)/bin/$(TARGET)
"""

BS_SOURCE = r"""
#ifndef ENABLE_PARSEC_HOOKS
#error "built without the hooks"
#endif
#ifndef ENABLE_THREADS
#error "built without version=pthreads"
#endif
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include "hooks.h"

static long long *values;
static long count, nthreads;
static long long partial[64];

static void *worker(void *arg)
{
    long t = (long)arg;
    for (long i = t; i < count; i += nthreads)
        partial[t] += values[i];
    return NULL;
}

int main(int argc, char **argv)
{
    long long want, sum = 0;
    pthread_t th[64];
    FILE *in, *out;

    __parsec_bench_begin(__parsec_blackscholes);
    if (argc != 4 || (nthreads = atol(argv[1])) < 1 || nthreads > 64)
        return 2;
    in = fopen(argv[2], "r");
    if (!in || fscanf(in, "%ld %lld", &count, &want) != 2)
        return 3;
    values = calloc((size_t)count, sizeof(*values));
    for (long i = 0; i < count; i++)
        if (fscanf(in, "%lld", &values[i]) != 1)
            return 3;
    __parsec_roi_begin();
    for (long t = 0; t < nthreads; t++)
        pthread_create(&th[t], NULL, worker, (void *)t);
    for (long t = 0; t < nthreads; t++) {
        pthread_join(th[t], NULL);
        sum += partial[t];
    }
    __parsec_roi_end();
    out = fopen(argv[3], "w");
    if (!out || fprintf(out, "%lld\n", sum) < 0 || fclose(out))
        return 4;
    printf("mini-blackscholes: %ld values, %ld threads, sum %lld (%s)\n", count, nthreads, sum,
           sum == want ? "right" : "WRONG");
    __parsec_bench_end();
    return sum == want ? 0 : 1;
}
"""

FFT_MAKEFILE = """\
TARGET = fft
OBJS = fft.o
LDFLAGS := $(LDFLAGS) -lm
PREFIX=${PARSECDIR}/ext/splash2x/kernels/fft/inst/${PARSECPLAT}
MACROS := ${PARSECDIR}/pkgs/libs/parmacs/inst/${PARSECPLAT}/m4/parmacs.${PARMACS_MACRO_FILE}.c.m4
ifdef version
  ifeq "$(version)" "pthreads"
    CFLAGS := $(CFLAGS) -DENABLE_THREADS -pthread
  endif
endif
$(TARGET): $(OBJS)
\t$(CC) $(OBJS) $(CFLAGS) -o $(TARGET) $(LDFLAGS) $(LIBS)
install:
\tmkdir -p $(PREFIX)/bin
\tcp -f $(TARGET) $(PREFIX)/bin/$(TARGET)
\tcp -f run.sh $(PREFIX)/bin/run.sh
.SUFFIXES:
.SUFFIXES: .o .c .C
.C.c:
\t$(M4) -s -Ulen -Uindex $(MACROS) $*.C > $*.c
.c.o:
\t$(CC) -c $(CFLAGS) $*.c
.C.o:
\t$(M4) -s -Ulen -Uindex $(MACROS) $*.C > $*.c
\t$(CC) -c $(CFLAGS) $*.c
"""

FFT_SOURCE = r"""MAIN_ENV
#include "hooks.h"

static SUM_TYPE partial[64];
static long m, p;

static void *worker(void *arg)
{
    long t = (long)arg;
    for (long i = t; i < (1L << m); i += p)
        partial[t] += (SUM_TYPE)i;
    return NULL;
}

int main(int argc, char **argv)
{
    pthread_t th[64];
    SUM_TYPE sum = 0, want;
    long stated = -1;
    FILE *in;

    __parsec_bench_begin(__splash2_fft);
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] == '-' && argv[i][1] == 'm')
            m = atol(argv[i] + 2);
        else if (argv[i][0] == '-' && argv[i][1] == 'p')
            p = atol(argv[i] + 2);
    }
    if (m < 1 || m > 40 || p < 1 || p > 64)
        return 2;
    /* the file run.sh generated from its template, for this thread count */
    in = fopen(argv[argc - 1], "r");
    if (!in || fscanf(in, "processors %ld", &stated) != 1 || stated != p)
        return 3;
    __parsec_roi_begin();
    for (long t = 0; t < p; t++)
        pthread_create(&th[t], NULL, worker, (void *)t);
    for (long t = 0; t < p; t++) {
        pthread_join(th[t], NULL);
        sum += partial[t];
    }
    __parsec_roi_end();
    want = ((SUM_TYPE)1 << m) * (((SUM_TYPE)1 << m) - 1) / 2;
    printf("mini-fft: m=%ld p=%ld sum %llu (%s)\n", m, p, sum, sum == want ? "right" : "WRONG");
    __parsec_bench_end();
    return sum == want ? 0 : 1;
}
"""

FFT_RUN_SH = """\
#!/bin/sh
TARGET=fft
NUMPROCS="$1"
INPUTSIZE="$2"
case "${INPUTSIZE}" in
"test" ) PROGARGS="-m4 -p${NUMPROCS}";;
"simsmall" ) PROGARGS="-m12 -p${NUMPROCS}";;
"simmedium" ) PROGARGS="-m16 -p${NUMPROCS}";;
*) echo "Input size error"; exit 1;;
esac
INPUTFILE="input_${NUMPROCS}"
cat input.template | sed s/NUMPROCS/$NUMPROCS/ > ${INPUTFILE}
PROG="${PARSECDIR}/ext/splash2x/kernels/${TARGET}/inst/${PARSECPLAT}/bin/${TARGET}"
RUN="$PROG $PROGARGS ${INPUTFILE}"
echo "Running $RUN:"
eval $RUN
"""

#: count of numbers in each set's input; the files state their own sum.
BS_SIZES = {"test": 10, "simsmall": 2000, "simmedium": 20000}
BS_FILES = {"test": "in_test.txt", "simsmall": "in_small.txt", "simmedium": "in_medium.txt"}


def _tar_bytes(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _bs_input(size: int) -> bytes:
    values = [(i * 7919) % 1000 for i in range(size)]
    return (f"{size} {sum(values)}\n" + "\n".join(map(str, values)) + "\n").encode()


def core_files() -> dict[str, bytes]:
    """Path (under parsec-3.0/) -> content, of the core archive."""
    bs, fft = "pkgs/apps/blackscholes", "ext/splash2x/kernels/fft"
    files: dict[str, str | bytes] = {
        "version": "3.0-mini\n",
        "pkgs/libs/hooks/src/include/hooks.h": HOOKS_H,
        "pkgs/libs/hooks/parsec/gcc.bldconf": INPLACE_BLDCONF.format(deps=""),
        "pkgs/libs/parmacs/src/Makefile": PARMACS_MAKEFILE,
        "pkgs/libs/parmacs/src/m4/parmacs.pthreads.c.m4": PARMACS_M4,
        f"{bs}/version": "2.2-mini\n",
        f"{bs}/src/Makefile": BS_MAKEFILE,
        f"{bs}/src/sum.c": BS_SOURCE,
        f"{bs}/parsec/gcc-pthreads.bldconf": INPLACE_BLDCONF.format(deps=""),
        f"{bs}/parsec/gcc.bldconf": f"source ${{PARSECDIR}}/{bs}/parsec/gcc-pthreads.bldconf\n",
        f"{bs}/parsec/gcc-hooks.bldconf": HOOKS_BLDCONF.format(pkg=bs),
        f"{fft}/version": "1.0-mini\n",
        f"{fft}/src/Makefile": FFT_MAKEFILE,
        f"{fft}/src/fft.C": FFT_SOURCE,
        f"{fft}/src/run.sh": FFT_RUN_SH,
        f"{fft}/parsec/gcc-pthreads.bldconf": INPLACE_BLDCONF.format(deps="parmacs"),
        f"{fft}/parsec/gcc.bldconf": f"source ${{PARSECDIR}}/{fft}/parsec/gcc-pthreads.bldconf\n",
        f"{fft}/parsec/gcc-hooks.bldconf": HOOKS_BLDCONF.format(pkg=fft),
        "pkgs/apps/x264/parsec/gcc-hooks.bldconf": (
            'build_deps="hooks"\nbuild_inplace="FALSE"\nbuild_conf="--enable-pthread"\n'
        ),
        "pkgs/apps/ferret/parsec/gcc-hooks.bldconf": (
            'build_deps="hooks gsl libjpeg"\nbuild_inplace="TRUE"\n'
        ),
    }
    for s in BS_SIZES:
        args = "${NTHREADS} " + BS_FILES[s] + " prices.txt"
        files[f"{bs}/parsec/{s}.runconf"] = f'run_exec="bin/blackscholes"\nrun_args="{args}"\n'
        files[f"{fft}/parsec/{s}.runconf"] = f'run_exec="bin/run.sh"\nrun_args="$NTHREADS {s}"\n'
    files[f"{bs}/inputs/input_test.tar"] = _tar_bytes({BS_FILES["test"]: _bs_input(10)})
    files[f"{fft}/inputs/input_test.tar"] = _tar_bytes({"input.template": b"processors NUMPROCS\n"})
    return {k: v.encode() if isinstance(v, str) else v for k, v in files.items()}


def input_sim_files() -> dict[str, bytes]:
    """The simulation inputs archive: simsmall and simmedium, nothing else."""
    bs, fft = "pkgs/apps/blackscholes", "ext/splash2x/kernels/fft"
    files = {}
    for s in ("simsmall", "simmedium"):
        files[f"{bs}/inputs/input_{s}.tar"] = _tar_bytes({BS_FILES[s]: _bs_input(BS_SIZES[s])})
        files[f"{fft}/inputs/input_{s}.tar"] = _tar_bytes(
            {"input.template": b"processors NUMPROCS\n"}
        )
    return files


def write_archive(path: Path, files: dict[str, bytes]) -> Path:
    """A .tar.gz with every file under parsec-3.0/, as the official archives are."""
    with tarfile.open(path, "w:gz") as tar:
        for name, data in sorted(files.items()):
            info = tarfile.TarInfo(f"{TOP}/{name}")
            info.size = len(data)
            info.mode = 0o755 if name.endswith(".sh") else 0o644
            tar.addfile(info, io.BytesIO(data))
    return path


def make_release(directory: Path) -> tuple[Path, Path]:
    """The core and input-sim archives of the miniature release."""
    directory.mkdir(parents=True, exist_ok=True)
    core = write_archive(directory / "parsec-3.0-core.tar.gz", core_files())
    sim = write_archive(directory / "parsec-3.0-input-sim.tar.gz", input_sim_files())
    return core, sim
