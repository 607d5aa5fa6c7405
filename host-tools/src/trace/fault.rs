//! A HardFault's status registers in words (ARMv7-M Architecture Reference Manual, B3.2.15
//! "Configurable Fault Status Register" and B3.2.16 "HardFault Status Register"): the
//! configurable fault status register is three in one (MemManage bits 0–7, BusFault bits
//! 8–15, UsageFault bits 16–31); a fault address is reported only when its VALID bit says
//! the address register holds it. ARMv6-M has none of these registers (all read 0).

/// The causes the registers name, most specific first, e.g. `precise data bus error at
/// 0x60000000` or `undefined instruction`. Empty when no bit is set (ARMv6-M).
pub fn describe(cfsr: u32, hfsr: u32, mmfar: u32, bfar: u32) -> Vec<String> {
    let bit = |n: u32| cfsr & (1 << n) != 0;
    let mut words = Vec::new();
    let mm_at = if bit(7) {
        format!(" at {mmfar:#010x}")
    } else {
        String::new()
    };
    let bus_at = if bit(15) {
        format!(" at {bfar:#010x}")
    } else {
        String::new()
    };
    // MemManage (MMFSR).
    if bit(0) {
        words.push("instruction access violation (MPU or execute-never)".to_owned());
    }
    if bit(1) {
        words.push(format!("data access violation{mm_at} (MPU)"));
    }
    if bit(3) {
        words.push("MemManage fault on exception return (unstacking)".to_owned());
    }
    if bit(4) {
        words.push("MemManage fault on exception entry (stacking)".to_owned());
    }
    if bit(5) {
        words.push("MemManage fault during lazy floating-point state preservation".to_owned());
    }
    // BusFault (BFSR).
    if bit(8) {
        words.push("instruction bus error".to_owned());
    }
    if bit(9) {
        words.push(format!("precise data bus error{bus_at}"));
    }
    if bit(10) {
        words.push("imprecise data bus error".to_owned());
    }
    if bit(11) {
        words.push("bus fault on exception return (unstacking)".to_owned());
    }
    if bit(12) {
        words.push("bus fault on exception entry (stacking)".to_owned());
    }
    if bit(13) {
        words.push("bus fault during lazy floating-point state preservation".to_owned());
    }
    // UsageFault (UFSR).
    if bit(16) {
        words.push("undefined instruction".to_owned());
    }
    if bit(17) {
        words.push("invalid state (a branch to an address without the Thumb bit)".to_owned());
    }
    if bit(18) {
        words.push("invalid exception return (EXC_RETURN)".to_owned());
    }
    if bit(19) {
        words.push("no coprocessor (floating point not enabled)".to_owned());
    }
    if bit(24) {
        words.push("unaligned access".to_owned());
    }
    if bit(25) {
        words.push("division by zero".to_owned());
    }
    // HardFault (HFSR).
    if hfsr & (1 << 1) != 0 {
        words.push("bus fault reading the vector table".to_owned());
    }
    if hfsr & (1 << 30) != 0 && words.is_empty() {
        words.push("a configurable fault escalated to HardFault".to_owned());
    }
    if hfsr & (1 << 31) != 0 {
        words.push("debug event".to_owned());
    }
    words
}

#[cfg(test)]
mod tests {
    use super::describe;

    #[test]
    fn names_the_faults_the_test_firmware_provokes() {
        // tests/firmware hard_fault --arg 0: a load from 0x60000000 (no memory there).
        assert_eq!(
            describe(0x8200, 0x4000_0000, 0, 0x6000_0000),
            ["precise data bus error at 0x60000000"]
        );
        // --arg 1: `udf`.
        assert_eq!(
            describe(0x1_0000, 0x4000_0000, 0, 0),
            ["undefined instruction"]
        );
        // Without BFARVALID the address is not claimed.
        assert_eq!(describe(0x200, 0, 0, 0x1234), ["precise data bus error"]);
        assert_eq!(
            describe(0x82, 0, 0x2000_0000, 0),
            ["data access violation at 0x20000000 (MPU)"]
        );
        assert_eq!(
            describe(0, 0x4000_0000, 0, 0),
            ["a configurable fault escalated to HardFault"]
        );
        assert!(describe(0, 0, 0, 0).is_empty());
    }
}
