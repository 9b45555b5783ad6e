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
    # two simple integer pipes (I0, I1), single-cycle [LLVM-A57]
    opList = [OpDesc(opClass="IntAlu", opLat=1)]
    count = 2


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
    # system-register moves; the branch pipe (B) is IntAlu work in gem5's
    # O3. An op class no unit lists (crypto, SVE predicates) issues in one
    # cycle without a unit (InstructionQueue::scheduleReadyInsts)
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
A53_DIVIDER_CLASSES = ("FloatDiv", "FloatSqrt", "SimdDiv", "SimdSqrt", "SimdFloatDiv", "SimdFloatSqrt")


class A53IntFU(MinorFU):
    # two integer ALUs with a 3-cycle result latency, whose operands are
    # read two cycles after issue ("not needed for two cycles": ReadAdvance
    # ReadI 2 [LLVM-A53]; srcRegsRelativeLats [2, 2, 2, 0] for A64 integer
    # ops [HPI]), so a dependent ALU op issues one cycle after its producer.
    # Without the late reads every dependent op waited all 3 cycles, which
    # made integer chains three times slower than the core's.
    opClasses = minorMakeOpClassSet(["IntAlu"])
    opLat = 3
    timings = [
        MinorFUTiming(
            description="operands read two cycles after issue",
            srcRegsRelativeLats=[2, 2, 2, 0],
        )
    ]


class A53IntMulFU(MinorFU):
    # one multiply-accumulate pipe, 4 cycles [LLVM-A53]
    opClasses = minorMakeOpClassSet(["IntMult"])
    opLat = 4


class A53IntDivFU(MinorFU):
    # iterative, not pipelined; LLVM models 4 cycles, which its own comment
    # calls optimistic: gem5's default 9 [assumed] stands
    opClasses = minorMakeOpClassSet(["IntDiv"])
    opLat = 9
    issueLat = 9


class A53FloatSimdFU(MinorFU):
    # FADD, FMUL, FCVT and ASIMD 4 cycles; FMAC 8 (its accumulator
    # forwarding is not modelled) [LLVM-A53]. gem5's default unit takes 6
    # for every FP/SIMD op, FDIV and FSQRT included.
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


class A53FUPool(MinorFUPool):
    # the load/store, system-register and SVE-predicate units are gem5's
    # defaults (one memory op per cycle [LLVM-A53]; no SVE in Armv8.0)
    funcUnits = [
        A53IntFU(),
        A53IntFU(),
        A53IntMulFU(),
        A53IntDivFU(),
        A53FloatSimdFU(),
        A53FloatDivFU(),
        MinorDefaultPredFU(),
        MinorDefaultMemFU(),
        MinorDefaultMiscFU(),
    ]


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
