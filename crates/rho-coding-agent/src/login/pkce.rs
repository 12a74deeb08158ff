//! PKCE (RFC 7636) for the login flows: a random verifier and its S256 challenge, both
//! base64url without padding, as pi makes them.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::rand::{SecureRandom, SystemRandom};

/// A verifier and the challenge made from it.
#[derive(Debug, Clone)]
pub struct Pkce {
    pub verifier: String,
    pub challenge: String,
}

impl Pkce {
    /// 32 random bytes as the verifier.
    pub fn new() -> Result<Self, String> {
        let mut bytes = [0u8; 32];
        SystemRandom::new().fill(&mut bytes).map_err(|_| "no random bytes from the system".to_owned())?;
        let verifier = URL_SAFE_NO_PAD.encode(bytes);
        Ok(Self { challenge: challenge(&verifier), verifier })
    }
}

/// The S256 challenge of `verifier`.
pub fn challenge(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(ring::digest::digest(&ring::digest::SHA256, verifier.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_challenge_is_the_unpadded_base64url_sha256_of_the_verifier() {
        // As Python computes it: urlsafe_b64encode(sha256(verifier)).rstrip("=").
        assert_eq!(
            challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r7wW1gFWFOEjXk"),
            "bwWFMyPfdG9qreDhH2lmftFx_dFeLDalzcT1gb_j68g"
        );
        let pkce = Pkce::new().unwrap();
        assert_eq!(pkce.verifier.len(), 43);
        assert_eq!(pkce.challenge, challenge(&pkce.verifier));
    }
}
