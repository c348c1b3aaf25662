//! Byte framing for stored tables and networks: magic, header, length, values,
//! checksum, so a file that is truncated, damaged or for another table is never trusted.

/// FNV-1a, 64 bits: enough to catch damage, not meant to resist tampering.
fn checksum(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

pub fn frame(magic: &[u8; 8], header: &[u8], values: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(8 + 4 + header.len() + 8 + values.len() + 8);
    out.extend_from_slice(magic);
    out.extend_from_slice(&(header.len() as u32).to_le_bytes());
    out.extend_from_slice(header);
    out.extend_from_slice(&(values.len() as u64).to_le_bytes());
    out.extend_from_slice(values);
    let sum = checksum(&out);
    out.extend_from_slice(&sum.to_le_bytes());
    out
}

/// The values of a framed table, if it has this magic and header and is intact.
pub fn unframe<'a>(magic: &[u8; 8], header: &[u8], bytes: &'a [u8]) -> Option<&'a [u8]> {
    let (stored_header, values) = unframe_described(magic, bytes)?;
    (stored_header == header).then_some(values)
}

/// The header and values of a framed table with this magic, if it is intact: for tables
/// whose header describes them, read before their values are.
pub fn unframe_described<'a>(magic: &[u8; 8], bytes: &'a [u8]) -> Option<(&'a [u8], &'a [u8])> {
    let (body, sum) = bytes.split_at_checked(bytes.len().checked_sub(8)?)?;
    if checksum(body).to_le_bytes() != sum {
        return None;
    }
    let rest = body.strip_prefix(magic.as_slice())?;
    let (header_len, rest) = rest.split_at_checked(4)?;
    let header_len = u32::from_le_bytes(header_len.try_into().ok()?) as usize;
    let (header, rest) = rest.split_at_checked(header_len)?;
    let (values_len, values) = rest.split_at_checked(8)?;
    let values_len = u64::from_le_bytes(values_len.try_into().ok()?);
    (values.len() as u64 == values_len).then_some((header, values))
}
