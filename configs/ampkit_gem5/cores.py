"""The two core types: an out-of-order Cortex-A57 stand-in and an in-order A53.

Neither is a validated model of the real core (no published, hardware-
validated gem5 A57 or A53 exists); each parameter that departs from
gem5's default says where its value comes from. Sources, by the tag in
the comments:

  [A57-TRM]  Arm Cortex-A57 MPCore TRM (DDI 0488), caches and TLBs
  [A53-TRM]  Arm Cortex-A53 MPCore TRM (DDI 0500), caches and TLBs
  [LLVM-A57] llvm/lib/Target/AArch64/AArch64SchedA57.td (widths, pipes,
             latencies, ROB size, mispredict penalty), which cites Arm's
             Cortex-A57 Software Optimization Guide
  [LLVM-A53] llvm/lib/Target/AArch64/AArch64SchedA53.td
  [HPI]      gem5's configs/common/cores/arm/HPI.py, Arm's in-order
             ARMv8-A model for its Research Starter Kit
  [assumed]  not published; a choice, kept in line with the above
"""

from m5.objects import (
    ArmMMU,
    ArmMinorCPU,
    ArmO3CPU,
    ArmTLB,
    BiModeBP,
    FUDesc,
    FUPool,
    MinorDefaultFloatSimdFU,
    MinorDefaultMemFU,
    MinorDefaultMiscFU,
    MinorDefaultPredFU,
    MinorFU,
    MinorFUPool,
    MinorFUTiming,
    OpDesc,
    Parent,
    ReturnAddrStack,
    SimpleBTB,
    SimpleIndirectPredictor,
    TournamentBP,
    minorMakeOpClassSet,
)

# --- Cortex-A57-like ----------------------------------------------------


class A57IntAlu(FUDesc):
    # two simple integer pipes (I0, I1), single-cycle, and the branch pipe
    # (B) [LLVM-A57]. gem5's Arm decoder gives branches no op class of
    # their own (IntAlu, the ISA parser's default), so B is a third IntAlu
    # unit: branches no longer take the ALUs' slots, at the price that
    # branch-free integer code may issue three ALU ops in a cycle where the
    # core issues two (dispatch is 3-wide, so no more than that). On
    # intmark it moved the big core's IPC from 1.889 to 1.893 (the
    # calibration, with the A53 changes of the same commit).
    opList = [OpDesc(opClass="IntAlu", opLat=1)]
    count = 3


class A57IntMulDiv(FUDesc):
    # one multi-cycle pipe (M): MUL 3 (64-bit: 5), DIV up to 19 (32-bit)
    # and 35 (64-bit), not pipelined [LLVM-A57]; gem5 has one IntDiv class
    opList = [
        OpDesc(opClass="IntMult", opLat=3),
        OpDesc(opClass="IntDiv", opLat=19, pipelined=False),
    ]
    count = 1


class A57Load(FUDesc):
    # one load pipe (L); load-to-use 4 counts the L1D's latency too [LLVM-A57]
    opList = [OpDesc(opClass="MemRead", opLat=1), OpDesc(opClass="FloatMemRead", opLat=1)]
    count = 1


class A57Store(FUDesc):
    # one store pipe (S) [LLVM-A57]
    opList = [OpDesc(opClass="MemWrite", opLat=1), OpDesc(opClass="FloatMemWrite", opLat=1)]
    count = 1


class A57FpSimd(FUDesc):
    # two FP/ASIMD pipes (X, W): FADD/FMUL 5, FMADD 9, FDIV/FSQRT 17 (single)
    # to 32 (double) not pipelined [LLVM-A57]; only W divides on the real
    # core, which one gem5 FUDesc per pipe type cannot express
    opList = [
        OpDesc(opClass="FloatAdd", opLat=5),
        OpDesc(opClass="FloatCmp", opLat=5),
        OpDesc(opClass="FloatCvt", opLat=5),
        OpDesc(opClass="FloatMult", opLat=5),
        OpDesc(opClass="FloatMultAcc", opLat=9),
        OpDesc(opClass="FloatMisc", opLat=3),
        OpDesc(opClass="FloatDiv", opLat=17, pipelined=False),
        OpDesc(opClass="FloatSqrt", opLat=17, pipelined=False),
        OpDesc(opClass="SimdAdd", opLat=3),
        OpDesc(opClass="SimdAddAcc", opLat=4),
        OpDesc(opClass="SimdAlu", opLat=3),
        OpDesc(opClass="SimdCmp", opLat=3),
        OpDesc(opClass="SimdCvt", opLat=5),
        OpDesc(opClass="SimdMisc", opLat=3),
        OpDesc(opClass="SimdMult", opLat=5),
        OpDesc(opClass="SimdMultAcc", opLat=5),
        OpDesc(opClass="SimdShift", opLat=3),
        OpDesc(opClass="SimdShiftAcc", opLat=3),
        OpDesc(opClass="SimdSqrt", opLat=17, pipelined=False),
        OpDesc(opClass="SimdFloatAdd", opLat=5),
        OpDesc(opClass="SimdFloatAlu", opLat=5),
        OpDesc(opClass="SimdFloatCmp", opLat=5),
        OpDesc(opClass="SimdFloatCvt", opLat=5),
        OpDesc(opClass="SimdFloatDiv", opLat=17, pipelined=False),
        OpDesc(opClass="SimdFloatMisc", opLat=3),
        OpDesc(opClass="SimdFloatMult", opLat=5),
        OpDesc(opClass="SimdFloatMultAcc", opLat=9),
        OpDesc(opClass="SimdFloatSqrt", opLat=17, pipelined=False),
    ]
    count = 2


class A57Misc(FUDesc):
    # system-register moves (branches: see A57IntAlu). An op class no unit
    # lists (crypto, SVE predicates) issues in one cycle without a unit
    # (InstructionQueue::scheduleReadyInsts)
    opList = [OpDesc(opClass="IprAccess", opLat=3, pipelined=False)]
    count = 1


class A57FUPool(FUPool):
    FUList = [A57IntAlu(), A57IntMulDiv(), A57Load(), A57Store(), A57FpSimd(), A57Misc()]


class A57BranchPredictor(BiModeBP):
    # bi-mode direction predictor, BTB of 2k-4k entries, a return stack of
    # unpublished size (Arm's A57 block diagram, via the research notes);
    # sizes [assumed] within those bounds
    globalPredictorSize = 4096
    choicePredictorSize = 4096
    btb = SimpleBTB(numEntries=2048)
    ras = ReturnAddrStack(numEntries=16)


class A57MMU(ArmMMU):
    # 48-entry L1 ITLB, 32-entry L1 DTLB, 1024-entry unified L2 TLB [A57-TRM]
    l2_shared = ArmTLB(entry_type="unified", size=1024, partial_levels=["L2"])
    itb = ArmTLB(entry_type="instruction", size=48, next_level=Parent.l2_shared)
    dtb = ArmTLB(entry_type="data", size=32, next_level=Parent.l2_shared)


class BigCore(ArmO3CPU):
    """Out-of-order, Cortex-A57-like."""

    # 3-wide decode and dispatch [LLVM-A57]; 128-bit fetch = 4 instructions
    fetchWidth = 3
    fetchBufferSize = 16
    decodeWidth = 3
    renameWidth = 3
    dispatchWidth = 3
    # up to 8 micro-ops issued, one per pipe [LLVM-A57]
    issueWidth = 8
    wbWidth = 8
    # retire width is unpublished [assumed]
    commitWidth = 3
    squashWidth = 3
    # 128 micro-ops in flight [LLVM-A57]
    numROBEntries = 128
    # eight issue queues of 8 entries [LLVM-A57]; gem5's IQ is unified
    numIQEntries = 64
    # Load and store queues and register files are unpublished [assumed].
    # They are sized so that the 128-entry ROB, not they, bounds the window:
    # the register files hold the architected state (gem5 keeps 35 integer
    # and 32 vector registers of it, plus its own) and 128 results more;
    # a queue of 32 takes a window whose loads or stores are a quarter of
    # its instructions, the usual share.
    LQEntries = 32
    SQEntries = 32
    numPhysIntRegs = 192
    numPhysFloatRegs = 192
    numPhysVecRegs = 192
    # a 12-stage in-order front end and a 14-cycle mispredict loop
    # [LLVM-A57]: the front-end delays make up the difference
    fetchToDecodeDelay = 3
    decodeToRenameDelay = 2
    renameToIEWDelay = 2
    fuPool = A57FUPool()
    branchPred = A57BranchPredictor()
    mmu = A57MMU()


# --- Cortex-A53-like ----------------------------------------------------


class A53BranchPredictor(TournamentBP):
    # A 4 KiB conditional predictor and a 256-entry indirect predictor
    # (Arm's A53 product description); the organisation is unpublished, so
    # [HPI]'s tournament predictor is scaled to that size [assumed]:
    # 8192 x 2-bit global (2 KiB) + 4096 x 2-bit choice (1 KiB) + 1024 x
    # 2-bit local (256 B) + 512 x 10-bit local histories (640 B) = 3.9 KiB
    localPredictorSize = 1024
    localCtrBits = 2
    localHistoryTableSize = 512
    globalPredictorSize = 8192
    globalCtrBits = 2
    choicePredictorSize = 4096
    choiceCtrBits = 2
    indirectBranchPred = SimpleIndirectPredictor(indirectSets=64, indirectWays=4)
    # the BTB and return stack are unpublished; [HPI]'s return stack
    btb = SimpleBTB(numEntries=256)
    ras = ReturnAddrStack(numEntries=8)


#: gem5's FP/SIMD classes that the A53 executes in its iterative divider.
A53_DIVIDER_CLASSES = (
    "FloatDiv",
    "FloatSqrt",
    "SimdDiv",
    "SimdSqrt",
    "SimdFloatDiv",
    "SimdFloatSqrt",
)

#: The little core's functional units in their pool's order (A53FUPool):
#: the Minor scoreboard names a result's producer by its index here.
A53_UNITS = ("int", "int", "mul", "div", "fp", "fp-div", "pred", "mem", "misc")

#: The producers whose results the integer and memory units do not read
#: late: the A53's late integer reads take only integer results (ReadI,
#: ReadIM, ReadIMA, ReadID list no load or FP write [LLVM-A53]), so a
#: load's or an FP op's consumer waits its whole latency
#: (cantForwardFromFUIndices: a consumer's srcRegsRelativeLats do not
#: apply to results from these units).
A53_NOT_FORWARDED = [A53_UNITS.index(unit) for unit in ("fp", "fp-div", "mem")]


def a64_timing(description: str, pattern: str, late: list[int]) -> MinorFUTiming:
    """A MinorFUTiming for the A64 instructions whose encoding matches
    ``pattern`` (32 characters of 0, 1 and x, bit 31 first, "_" ignored),
    whose sources are read ``late`` cycles after issue, in gem5's source
    order (the last figure for the rest). gem5's Minor matches the
    instruction word with its decoder's state above bit 31: bit 34 set
    means A64 (as [HPI] matches it)."""
    bits = pattern.replace("_", "")
    if len(bits) != 32 or set(bits) - set("01x"):
        raise ValueError(f"not an A64 encoding pattern: {pattern!r}")
    mask = match = 1 << 34
    for position, bit in enumerate(reversed(bits)):
        if bit != "x":
            mask |= 1 << position
            match |= int(bit) << position
    return MinorFUTiming(description=description, mask=mask, match=match, srcRegsRelativeLats=late)


#: Every A64 instruction (the catch-all of a unit's timings).
ANY_A64 = "xxxx_xxxx_xxxx_xxxx_xxxx_xxxx_xxxx_xxxx"


class A53IntFU(MinorFU):
    # two integer ALUs with a 3-cycle result latency whose operands are
    # read two cycles after issue ("not needed for two cycles": ReadAdvance
    # ReadI 2 [LLVM-A53]), so a dependent ALU op issues one cycle after its
    # integer producer. Without the late reads every dependent op waited
    # all 3 cycles, which made integer chains three times slower than the
    # core's. gem5 orders an instruction's sources by appearance in its
    # code, registers and flags alike (one sort priority), so the figures
    # below are per position: [2] reads them all two cycles late, flags
    # included (CSEL's NZ, C, V, Rn, Rm; CCMP's Rm, NZ, C, V, Rn).
    opClasses = minorMakeOpClassSet(["IntAlu"])
    opLat = 3
    cantForwardFromFUIndices = A53_NOT_FORWARDED
    timings = [
        # A shifted operand is needed a cycle earlier, an unshifted one
        # not (A53ReadShifted 1, A53ReadNotShifted 2 [LLVM-A53]). A shift
        # by 0 (imm6, bits 15-10) is no shift: the first matching entry
        # wins, so these come first.
        a64_timing("add/sub, register unshifted", "xxx0_1011_xx0x_xxxx_0000_00xx_xxxx_xxxx", [2]),
        a64_timing("logical, register unshifted", "xxx0_1010_xxxx_xxxx_0000_00xx_xxxx_xxxx", [2]),
        # gem5 computes the shifted or extended Rm first (its code is
        # prepended), then reads Rn: [Rm, Rn]. An extended register is
        # taken as shifted, as LLVM does for all but a plain UXTX/LSL #0.
        a64_timing("add/sub, shifted register", "xxx0_1011_xx0x_xxxx_xxxx_xxxx_xxxx_xxxx", [1, 2]),
        a64_timing("add/sub, extended register", "xxx0_1011_xx1x_xxxx_xxxx_xxxx_xxxx_xxxx", [1, 2]),
        a64_timing("logical, shifted register", "xxx0_1010_xxxx_xxxx_xxxx_xxxx_xxxx_xxxx", [1, 2]),
        a64_timing("operands read two cycles after issue", ANY_A64, [2]),
    ]


class A53IntMulFU(MinorFU):
    # one multiply-accumulate pipe, 4 cycles [LLVM-A53]; the multiplicands
    # are read a cycle after issue and the accumulator two (ReadIM 1,
    # ReadIMA 2 [LLVM-A53]). gem5's MADD and MSUB compute Op1 +/- Op2 * Op3
    # with the decoder passing Ra as Op1, and the long forms likewise, so
    # the accumulator is the first source.
    opClasses = minorMakeOpClassSet(["IntMult"])
    opLat = 4
    cantForwardFromFUIndices = A53_NOT_FORWARDED
    timings = [
        # MADD, MSUB, SMADDL, SMSUBL, UMADDL, UMSUBL (not SMULH, UMULH)
        a64_timing(
            "multiply-accumulate: accumulator read late",
            "x001_1011_x0xx_xxxx_xxxx_xxxx_xxxx_xxxx",
            [2, 1],
        ),
        a64_timing("multiplicands read a cycle late", ANY_A64, [1]),
    ]


class A53IntDivFU(MinorFU):
    # iterative, not pipelined; LLVM models 4 cycles, which its own comment
    # calls optimistic: gem5's default 9 [assumed] stands. Operands are
    # read a cycle after issue (ReadID 1 [LLVM-A53]).
    opClasses = minorMakeOpClassSet(["IntDiv"])
    opLat = 9
    issueLat = 9
    cantForwardFromFUIndices = A53_NOT_FORWARDED
    timings = [a64_timing("operands read a cycle late", ANY_A64, [1])]


class A53FloatSimdFU(MinorFU):
    # FADD, FMUL, FCVT and ASIMD 4 cycles; FMAC 8 (its accumulator
    # forwarding is not modelled) [LLVM-A53]. gem5's default unit takes 6
    # for every FP/SIMD op, FDIV and FSQRT included. It reads every source
    # at issue, so it needs no exclusions.
    opClasses = minorMakeOpClassSet(
        [
            str(c.opClass)
            for c in MinorDefaultFloatSimdFU().opClasses.opClasses
            if str(c.opClass) not in A53_DIVIDER_CLASSES
        ]
    )
    opLat = 4
    timings = [
        MinorFUTiming(
            description="multiply-accumulate",
            opClasses=minorMakeOpClassSet(["FloatMultAcc", "SimdFloatMultAcc", "SimdMultAcc"]),
            extraAssumedLat=4,
            # no source register is needed later than at issue
            srcRegsRelativeLats=[],
        )
    ]


class A53FloatDivFU(MinorFU):
    # FDIV 18 and FSQRT 17 cycles in single precision, not pipelined
    # [LLVM-A53] (double takes 33 and 32: gem5's classes do not tell the
    # widths apart, so single precision's figure stands for both)
    opClasses = minorMakeOpClassSet(list(A53_DIVIDER_CLASSES))
    opLat = 18
    issueLat = 18


class A53MemFU(MinorDefaultMemFU):
    # One load/store pipe [LLVM-A53], gem5's default unit: a load's result
    # is due 3 cycles after it issues (opLat 1 + extraAssumedLat 2), the
    # A53's load-to-use latency to any consumer, since none reads a load's
    # result late (A53_NOT_FORWARDED). 3 is [assumed]: LLVM's model-wide
    # LoadLatency, which it calls optimistic, where its per-operand WriteLD
    # says 4. The due cycle only spaces issue: a consumer of a load that
    # misses issues on time and waits at its unit's end for the load to
    # commit. Addresses and store data are read a cycle late from integer
    # results (gem5's default [1]; LLVM's ReadAdrBase 0, [HPI] 2), on time
    # from a load's (pointer chasing at the load-to-use latency).
    cantForwardFromFUIndices = A53_NOT_FORWARDED


#: Each of A53_UNITS' names, its unit.
A53_UNIT_TYPES = {
    "int": A53IntFU,
    "mul": A53IntMulFU,
    "div": A53IntDivFU,
    "fp": A53FloatSimdFU,
    "fp-div": A53FloatDivFU,
    "pred": MinorDefaultPredFU,
    "mem": A53MemFU,
    "misc": MinorDefaultMiscFU,
}


class A53FUPool(MinorFUPool):
    # the system-register and SVE-predicate units are gem5's defaults (no
    # SVE in Armv8.0)
    funcUnits = [A53_UNIT_TYPES[unit]() for unit in A53_UNITS]


class A53MMU(ArmMMU):
    # 10-entry micro-TLBs, 512-entry unified main TLB [A53-TRM]
    l2_shared = ArmTLB(entry_type="unified", size=512, partial_levels=["L2"])
    itb = ArmTLB(entry_type="instruction", size=10, next_level=Parent.l2_shared)
    dtb = ArmTLB(entry_type="data", size=10, next_level=Parent.l2_shared)


class LittleCore(ArmMinorCPU):
    """In-order, dual-issue, Cortex-A53-like."""

    # dual issue, one load/store per cycle [LLVM-A53], as [HPI]
    decodeInputWidth = 2
    executeInputWidth = 2
    executeIssueLimit = 2
    executeCommitLimit = 2
    executeMemoryIssueLimit = 1
    executeMemoryCommitLimit = 1
    # [HPI]
    executeLSQStoreBufferSize = 5
    executeMaxAccessesInMemory = 2
    executeBranchDelay = 1
    executeFuncUnits = A53FUPool()
    branchPred = A53BranchPredictor()
    mmu = A53MMU()


#: What ampkit's platforms.toml calls each core model.
MODELS = {"cortex-a57": BigCore, "cortex-a53": LittleCore}
