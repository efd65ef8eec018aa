//! Key material for the TCP backend: one CA, one certificate per party.

use std::fmt;
use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair, KeyUsagePurpose,
    PKCS_ECDSA_P256_SHA256,
};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivatePkcs8KeyDer};

use crate::{NetError, PartyId};

/// The DNS name (subject alternative name) in party `i`'s certificate.
pub fn party_name(i: PartyId) -> String {
    format!("party-{i}")
}

/// The DNS name in the certificate of the service client called `name`.
pub fn client_name(name: &str) -> String {
    format!("client-{name}")
}

/// What a service client may do, written into its certificate: an operator's also names
/// [`OPERATOR_NAME`] (a DNS subject alternative name beside `client-<name>`), anyone else's
/// certificate makes it an enrolling client.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientRole {
    /// Enrols and checks templates, reads its own outcomes and the nodes' status.
    Enroll,
    /// Also deletes identities and reads the commit log (every client's outcomes).
    Operator,
}

/// The DNS name an operator's certificate carries besides `client-<name>`.
pub const OPERATOR_NAME: &str = "role-operator";

/// The role a (client-CA-verified) client certificate carries.
pub fn client_role(cert: &rustls::pki_types::CertificateDer<'_>) -> ClientRole {
    if super::cert_names(cert, OPERATOR_NAME) {
        ClientRole::Operator
    } else {
        ClientRole::Enroll
    }
}

/// Checks that `name` can name a service client: non-empty, only ASCII letters, digits, '-', '_'
/// and '.', and making `client-{name}` a valid DNS name (the name in its certificate, which the
/// nodes match) and `client-{name}.pem` a plain file name.
pub fn check_client_name(name: &str) -> Result<(), NetError> {
    let refuse = |why: &str| Err(NetError::Certificate { reason: format!("client name {name:?} {why}") });
    if name.is_empty() {
        return refuse("is empty; give each client a name, comma separated");
    }
    if name.eq_ignore_ascii_case("ca") {
        return refuse("is reserved (client-ca.pem is the client CA's certificate)");
    }
    if let Some(c) = name.chars().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))) {
        return refuse(&format!("contains {c:?}; use only ASCII letters, digits, '-', '_' and '.'"));
    }
    // A trailing dot passes as DNS, but no certificate's name may end in one.
    if name.ends_with('.') || rustls::pki_types::ServerName::try_from(client_name(name)).is_err() {
        return refuse(&format!(
            "does not make a valid DNS name {:?}: each part between dots must be 1 to 63 characters, \
             not end in '-', and the last may not be all digits",
            client_name(name)
        ));
    }
    Ok(())
}

/// A freshly generated public-key infrastructure for `n` parties: a party CA
/// (ECDSA P-256, self-signed) and, for each party `i`, an ECDSA P-256 key and
/// a certificate signed by it whose subject alternative name is the DNS name
/// `party-{i}`, valid for TLS server and client authentication; and a separate
/// client CA signing the clients' certificates (client authentication only).
/// Peers trust only the party CA, a node's client port only the client CA: a
/// client certificate is never a peer's, nor a party's a client's.
///
/// The CAs' private keys are discarded after generation: no further
/// certificates can be issued.
pub struct Pki {
    ca_cert_der: Vec<u8>,
    ca_cert_pem: String,
    client_ca_der: Vec<u8>,
    client_ca_pem: String,
    parties: Vec<PartyKeys>,
    clients: Vec<(String, PartyKeys)>,
}

struct PartyKeys {
    cert_der: Vec<u8>,
    cert_pem: String,
    key_der: Vec<u8>,
    key_pem: String,
}

impl fmt::Debug for Pki {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pki").field("n", &self.parties.len()).finish_non_exhaustive()
    }
}

impl Pki {
    /// Generates a CA and certificates for parties `0..n`.
    ///
    /// # Panics
    /// If certificate generation fails (not expected with these fixed,
    /// valid parameters).
    pub fn generate(n: usize) -> Pki {
        Self::generate_with_clients(n, &[]).expect("generating the certificates")
    }

    /// Generates a CA, certificates for parties `0..n`, and for each name in
    /// `clients` a client certificate naming `client-{name}` (TLS client
    /// authentication only): the callers a node's service accepts.
    ///
    /// Fails, before generating anything, if a client name is refused by
    /// [`check_client_name`].
    pub fn generate_with_clients(n: usize, clients: &[&str]) -> Result<Pki, NetError> {
        let clients: Vec<_> = clients.iter().map(|&c| (c, ClientRole::Enroll)).collect();
        Self::generate_with_roles(n, &clients)
    }

    /// As [`generate_with_clients`](Self::generate_with_clients), each client with its role (an
    /// operator's certificate also names [`OPERATOR_NAME`]).
    pub fn generate_with_roles(n: usize, clients: &[(&str, ClientRole)]) -> Result<Pki, NetError> {
        clients.iter().try_for_each(|(c, _)| check_client_name(c))?;
        Self::try_generate(n, clients)
            .map_err(|e| NetError::Certificate { reason: format!("generating the certificates: {e}") })
    }

    fn try_generate(n: usize, client_names: &[(&str, ClientRole)]) -> Result<Pki, rcgen::Error> {
        let ca = |name: &str| -> Result<_, rcgen::Error> {
            let key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256)?;
            let mut params = CertificateParams::new(Vec::<String>::new())?;
            params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
            params.distinguished_name.push(DnType::CommonName, name);
            params.key_usages =
                vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign, KeyUsagePurpose::DigitalSignature];
            let cert = params.self_signed(&key)?;
            Ok((cert, key))
        };
        let (ca_cert, ca_key) = ca("Argus party CA")?;
        let (client_ca, client_ca_key) = ca("Argus client CA")?;

        let leaf = |name: String,
                    extra: Option<&str>,
                    usages: Vec<ExtendedKeyUsagePurpose>,
                    (ca_cert, ca_key): (&rcgen::Certificate, &KeyPair)|
         -> Result<PartyKeys, rcgen::Error> {
            let key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256)?;
            let names: Vec<String> = std::iter::once(name.clone()).chain(extra.map(str::to_string)).collect();
            let mut params = CertificateParams::new(names)?;
            params.distinguished_name.push(DnType::CommonName, name);
            params.is_ca = IsCa::ExplicitNoCa;
            params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
            params.extended_key_usages = usages;
            let cert = params.signed_by(&key, ca_cert, ca_key)?;
            Ok(PartyKeys {
                cert_der: cert.der().to_vec(),
                cert_pem: cert.pem(),
                key_der: key.serialize_der(),
                key_pem: key.serialize_pem(),
            })
        };
        let both = || vec![ExtendedKeyUsagePurpose::ServerAuth, ExtendedKeyUsagePurpose::ClientAuth];
        let parties =
            (0..n).map(|i| leaf(party_name(i), None, both(), (&ca_cert, &ca_key))).collect::<Result<Vec<_>, _>>()?;
        let client_auth = || vec![ExtendedKeyUsagePurpose::ClientAuth];
        let client = |&(c, role): &(&str, ClientRole)| -> Result<_, rcgen::Error> {
            let extra = (role == ClientRole::Operator).then_some(OPERATOR_NAME);
            Ok((c.to_string(), leaf(client_name(c), extra, client_auth(), (&client_ca, &client_ca_key))?))
        };
        let clients = client_names.iter().map(client).collect::<Result<Vec<_>, rcgen::Error>>()?;
        Ok(Pki {
            ca_cert_der: ca_cert.der().to_vec(),
            ca_cert_pem: ca_cert.pem(),
            client_ca_der: client_ca.der().to_vec(),
            client_ca_pem: client_ca.pem(),
            parties,
            clients,
        })
    }

    /// The identity of the client called `name`, if it was generated: its certificate (signed by
    /// the client CA) and key, trusting the party CA (the nodes' certificates).
    pub fn client_identity(&self, name: &str) -> Option<TlsIdentity> {
        let (_, k) = self.clients.iter().find(|(c, _)| c == name)?;
        Some(TlsIdentity {
            ca_cert_der: self.ca_cert_der.clone(),
            cert_der: k.cert_der.clone(),
            key_der: k.key_der.clone(),
        })
    }

    /// Number of parties.
    pub fn n(&self) -> usize {
        self.parties.len()
    }

    /// The party CA's certificate (DER).
    pub fn ca_cert_der(&self) -> &[u8] {
        &self.ca_cert_der
    }

    /// The client CA's certificate (DER): what a node's client port trusts.
    pub fn client_ca_der(&self) -> &[u8] {
        &self.client_ca_der
    }

    /// Party `i`'s identity: CA certificate, its certificate and private key.
    ///
    /// # Panics
    /// If `i >= self.n()`.
    pub fn identity(&self, i: PartyId) -> TlsIdentity {
        let p = &self.parties[i];
        TlsIdentity { ca_cert_der: self.ca_cert_der.clone(), cert_der: p.cert_der.clone(), key_der: p.key_der.clone() }
    }

    /// Every file [`Pki::write_pem`] writes into `dir`, the CA certificates first.
    pub fn pem_files(&self, dir: impl AsRef<Path>) -> Vec<PathBuf> {
        let dir = dir.as_ref();
        let parties = (0..self.parties.len()).map(|i| PemPaths::new(dir, i));
        let clients = self.clients.iter().map(|(name, _)| PemPaths::client(dir, name));
        let mut files = vec![dir.join(CA_FILE), PemPaths::client_ca(dir)];
        files.extend(parties.chain(clients).flat_map(|p| [p.cert, p.key]));
        files
    }

    /// Writes the CA certificates and every party's (and client's) certificate and key as PEM
    /// files into `dir` (created if missing), named as in [`PemPaths::new`], [`PemPaths::client`]
    /// and [`PemPaths::client_ca`]: `ca.pem` (party CA), `client-ca.pem`, `party-{i}.pem`,
    /// `party-{i}.key`, `client-{name}.pem`, `client-{name}.key` (keys are written with mode
    /// 0600 on Unix). Each process then loads its identity with
    /// [`TlsIdentity::from_pem_dir`].
    pub fn write_pem(&self, dir: impl AsRef<Path>) -> Result<(), NetError> {
        let dir = dir.as_ref();
        std::fs::create_dir_all(dir).map_err(|e| io_err(format!("creating {}", dir.display()), e))?;
        let ca = dir.join(CA_FILE);
        std::fs::write(&ca, &self.ca_cert_pem).map_err(|e| io_err(format!("writing {}", ca.display()), e))?;
        let client_ca = PemPaths::client_ca(dir);
        std::fs::write(&client_ca, &self.client_ca_pem)
            .map_err(|e| io_err(format!("writing {}", client_ca.display()), e))?;
        for (i, p) in self.parties.iter().enumerate() {
            let paths = PemPaths::new(dir, i);
            std::fs::write(&paths.cert, &p.cert_pem)
                .map_err(|e| io_err(format!("writing {}", paths.cert.display()), e))?;
            write_private(&paths.key, p.key_pem.as_bytes())
                .map_err(|e| io_err(format!("writing {}", paths.key.display()), e))?;
        }
        for (name, c) in &self.clients {
            let paths = PemPaths::client(dir, name);
            std::fs::write(&paths.cert, &c.cert_pem)
                .map_err(|e| io_err(format!("writing {}", paths.cert.display()), e))?;
            write_private(&paths.key, c.key_pem.as_bytes())
                .map_err(|e| io_err(format!("writing {}", paths.key.display()), e))?;
        }
        Ok(())
    }
}

const CA_FILE: &str = "ca.pem";
const CLIENT_CA_FILE: &str = "client-ca.pem";

#[cfg(unix)]
fn write_private(path: &Path, data: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    use std::os::unix::fs::PermissionsExt;
    let mut f = std::fs::OpenOptions::new().write(true).create(true).truncate(true).mode(0o600).open(path)?;
    // `mode` applies only to a new file: an overwritten key keeps no looser mode it had.
    f.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    f.write_all(data)
}

#[cfg(not(unix))]
fn write_private(path: &Path, data: &[u8]) -> std::io::Result<()> {
    std::fs::write(path, data)
}

fn io_err(context: String, source: std::io::Error) -> NetError {
    NetError::Io { context, source }
}

/// The file names [`Pki::write_pem`] uses for party `i` in a directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PemPaths {
    /// CA certificate: `dir/ca.pem`.
    pub ca: PathBuf,
    /// Party certificate: `dir/party-{i}.pem`.
    pub cert: PathBuf,
    /// Party private key (PKCS#8): `dir/party-{i}.key`.
    pub key: PathBuf,
}

impl PemPaths {
    /// The paths of party `i`'s files in `dir`.
    pub fn new(dir: impl AsRef<Path>, i: PartyId) -> Self {
        let dir = dir.as_ref();
        PemPaths {
            ca: dir.join(CA_FILE),
            cert: dir.join(format!("{}.pem", party_name(i))),
            key: dir.join(format!("{}.key", party_name(i))),
        }
    }

    /// The client CA's certificate in `dir`: `dir/client-ca.pem`.
    pub fn client_ca(dir: impl AsRef<Path>) -> PathBuf {
        dir.as_ref().join(CLIENT_CA_FILE)
    }

    /// The paths of client `name`'s files in `dir` (`ca` is the party CA, which signs the
    /// nodes' certificates).
    pub fn client(dir: impl AsRef<Path>, name: &str) -> Self {
        let dir = dir.as_ref();
        PemPaths {
            ca: dir.join(CA_FILE),
            cert: dir.join(format!("{}.pem", client_name(name))),
            key: dir.join(format!("{}.key", client_name(name))),
        }
    }
}

/// What one party needs to join the TLS network: the CA certificate that
/// all parties trust, its own certificate, and its private key (all DER).
#[derive(Clone, PartialEq, Eq)]
pub struct TlsIdentity {
    /// The party CA's certificate (DER). Only certificates signed by it are
    /// accepted from peers.
    pub ca_cert_der: Vec<u8>,
    /// This party's certificate (DER), naming `party-{id}`.
    pub cert_der: Vec<u8>,
    /// This party's private key, PKCS#8 DER.
    pub key_der: Vec<u8>,
}

impl fmt::Debug for TlsIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsIdentity")
            .field("ca_cert_der", &format_args!("{} bytes", self.ca_cert_der.len()))
            .field("cert_der", &format_args!("{} bytes", self.cert_der.len()))
            .field("key_der", &"<redacted>")
            .finish()
    }
}

impl TlsIdentity {
    /// Loads an identity from PEM files: the CA certificate, this party's
    /// certificate (first `CERTIFICATE` block of each) and its private key
    /// (a PKCS#8 `PRIVATE KEY` block).
    pub fn from_pem_files(
        ca: impl AsRef<Path>,
        cert: impl AsRef<Path>,
        key: impl AsRef<Path>,
    ) -> Result<TlsIdentity, NetError> {
        let (ca, cert, key) = (ca.as_ref(), cert.as_ref(), key.as_ref());
        let ca_cert = CertificateDer::from_pem_file(ca).map_err(|e| pem_err(ca, e))?;
        let own_cert = CertificateDer::from_pem_file(cert).map_err(|e| pem_err(cert, e))?;
        let own_key = PrivatePkcs8KeyDer::from_pem_file(key).map_err(|e| pem_err(key, e))?;
        Ok(TlsIdentity {
            ca_cert_der: ca_cert.to_vec(),
            cert_der: own_cert.to_vec(),
            key_der: own_key.secret_pkcs8_der().to_vec(),
        })
    }

    /// The client CA's certificate (DER) from a directory written by [`Pki::write_pem`], or
    /// `None` if the directory has none (written before there was a client CA).
    pub fn client_ca_from_pem_dir(dir: impl AsRef<Path>) -> Result<Option<Vec<u8>>, NetError> {
        let path = PemPaths::client_ca(dir);
        if !path.exists() {
            return Ok(None);
        }
        let cert = CertificateDer::from_pem_file(&path).map_err(|e| pem_err(&path, e))?;
        Ok(Some(cert.to_vec()))
    }

    /// Loads party `i`'s identity from a directory written by
    /// [`Pki::write_pem`].
    pub fn from_pem_dir(dir: impl AsRef<Path>, i: PartyId) -> Result<TlsIdentity, NetError> {
        let p = PemPaths::new(dir, i);
        Self::from_pem_files(&p.ca, &p.cert, &p.key)
    }
}

fn pem_err(path: &Path, e: rustls::pki_types::pem::Error) -> NetError {
    let source = match e {
        rustls::pki_types::pem::Error::Io(io) => io,
        other => std::io::Error::new(std::io::ErrorKind::InvalidData, other.to_string()),
    };
    io_err(format!("reading PEM file {}", path.display()), source)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepted_client_names_make_certificates_the_nodes_match() {
        let names = ["demo", "guest-2", "ops_team", "a.b", "X9"];
        let pki = Pki::generate_with_clients(3, &names).unwrap();
        for name in names {
            let cert = CertificateDer::from(pki.client_identity(name).unwrap().cert_der);
            assert!(crate::tcp::cert_names(&cert, &client_name(name)), "{name}");
        }
    }

    /// An operator's certificate carries its role, an enrolling client's does not; neither is
    /// signed by the party CA.
    #[test]
    fn certificates_carry_the_role() {
        let pki = Pki::generate_with_roles(3, &[("ops", ClientRole::Operator), ("app", ClientRole::Enroll)]).unwrap();
        let cert = |n| CertificateDer::from(pki.client_identity(n).unwrap().cert_der);
        assert_eq!(client_role(&cert("ops")), ClientRole::Operator);
        assert_eq!(client_role(&cert("app")), ClientRole::Enroll);
        assert!(crate::tcp::cert_names(&cert("ops"), &client_name("ops")));
        assert_ne!(pki.client_ca_der(), pki.ca_cert_der());
    }

    #[test]
    fn a_client_name_that_cannot_name_a_certificate_or_file_is_refused_not_a_panic() {
        for bad in ["", "ca", "ü", "../escaped", "a/b", "a b", "x-", "a..b", "a.1", "a.", &"x".repeat(57)] {
            let e = Pki::generate_with_clients(3, &["ok", bad]).unwrap_err();
            assert!(matches!(e, NetError::Certificate { .. }), "{bad:?}: {e:?}");
            assert!(e.to_string().starts_with(&format!("client name {bad:?}")), "{bad:?}: {e}");
        }
        assert!(check_client_name(&"x".repeat(56)).is_ok());
    }

    #[test]
    fn pem_files_lists_what_write_pem_writes() {
        let dir = std::env::temp_dir().join(format!("argus-pem-files-{}", std::process::id()));
        let pki = Pki::generate_with_clients(2, &["c"]).unwrap();
        pki.write_pem(&dir).unwrap();
        let mut written: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
        let mut listed = pki.pem_files(&dir);
        written.sort();
        listed.sort();
        assert_eq!(written, listed);
        assert_eq!(listed.len(), 2 + 2 * 2 + 2);
        std::fs::remove_dir_all(&dir).ok();
    }

    #[cfg(unix)]
    #[test]
    fn an_overwritten_key_is_private_again() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("argus-key-mode-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let key = dir.join("party-0.key");
        std::fs::write(&key, "old").unwrap();
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
        Pki::generate(2).write_pem(&dir).unwrap();
        assert_eq!(std::fs::metadata(&key).unwrap().permissions().mode() & 0o777, 0o600);
        std::fs::remove_dir_all(&dir).ok();
    }
}
