//! LEB128 varints and zigzag signs, as postcard writes them: the hand-written encodings
//! (frame columns, geometry planes) share them with postcard-encoded records.

/// Appends `v` as a LEB128 varint.
pub(crate) fn put(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The zigzag form of a wrapping difference: small of either sign, small varint.
pub(crate) fn zigzag(delta: u64) -> u64 {
    let d = delta as i64;
    ((d << 1) ^ (d >> 63)) as u64
}

/// `base` plus the difference whose zigzag form is `z`.
pub(crate) fn unzigzag(z: u64, base: u64) -> u64 {
    let d = ((z >> 1) as i64) ^ -((z & 1) as i64);
    base.wrapping_add(d as u64)
}

/// [`zigzag`] for 32 bits: postcard's form of an `i32`.
pub(crate) fn zigzag32(delta: u32) -> u32 {
    let d = delta as i32;
    ((d << 1) ^ (d >> 31)) as u32
}

/// The inverse of [`zigzag32`].
pub(crate) fn unzigzag32(z: u32) -> u32 {
    (((z >> 1) as i32) ^ -((z & 1) as i32)) as u32
}

/// Reads varints from one part of the payload, naming that part in errors.
pub(crate) struct Cursor<'a> {
    bytes: &'a [u8],
    pub(crate) name: &'static str,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(bytes: &'a [u8], name: &'static str) -> Self {
        Cursor { bytes, name }
    }

    pub(crate) fn remaining(&self) -> u64 {
        self.bytes.len() as u64
    }

    pub(crate) fn take(&mut self, n: usize) -> &'a [u8] {
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        head
    }

    pub(crate) fn rest(&self) -> &'a [u8] {
        self.bytes
    }

    pub(crate) fn varint(&mut self) -> Result<u64, String> {
        let mut v = 0u64;
        for (i, &b) in self.bytes.iter().enumerate().take(10) {
            // The tenth byte holds bit 63 only; anything more does not fit a u64.
            if i == 9 && b > 1 {
                return Err(format!("{}: varint over 64 bits", self.name));
            }
            v |= u64::from(b & 0x7f) << (7 * i);
            if b < 0x80 {
                self.bytes = &self.bytes[i + 1..];
                return Ok(v);
            }
        }
        Err(format!("{}: ends inside a value", self.name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zigzag_round_trips_extremes() {
        for (a, b) in [
            (0, 0),
            (u64::MAX, 0),
            (0, u64::MAX),
            (u64::MAX, u64::MAX),
            (1 << 63, 1),
            (5, 7),
        ] {
            assert_eq!(unzigzag(zigzag(a.wrapping_sub(b)), b), a);
        }
        for (a, b) in [(0u32, u32::MAX), (u32::MAX, 0), (3, 9)] {
            assert_eq!(b.wrapping_add(unzigzag32(zigzag32(a.wrapping_sub(b)))), a);
        }
        assert_eq!(zigzag(0), 0);
        assert_eq!(zigzag(u64::MAX), 1);
        assert_eq!(zigzag(1), 2);
    }

    #[test]
    fn varints_of_every_length_round_trip_and_overlong_ones_are_refused() {
        let mut out = Vec::new();
        let values = [
            0,
            1,
            127,
            128,
            300,
            u64::from(u32::MAX),
            u64::MAX - 1,
            u64::MAX,
        ];
        for v in values {
            put(&mut out, v);
        }
        let mut c = Cursor::new(&out, "test");
        for v in values {
            assert_eq!(c.varint().unwrap(), v);
        }
        assert_eq!(c.remaining(), 0);
        let overlong = [0xff; 10];
        assert!(Cursor::new(&overlong, "test")
            .varint()
            .unwrap_err()
            .contains("over 64 bits"));
        assert!(Cursor::new(&[0x80], "test")
            .varint()
            .unwrap_err()
            .contains("ends inside"));
    }
}
