//! Which hosts the lab has, their addresses and what each serves: a small TOML format
//! (docs/methods/lab.md). The default mirrors the seed's Table I: a DFS namespace server, two
//! replica servers and three client PCs on one subnet.

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::net::Ipv4Addr;

/// A server's services.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Service {
    /// Samba with the shares `smb-sharing` and `nfs-sharing` on the host's backing image.
    Samba,
    /// Samba with the MS-DFS root `dfs`, whose links point at the replicas' shares.
    DfsRoot,
    /// NFS-Ganesha exporting `nfs-sharing` (NFSv3 and NFSv4.1), restricted to the subnet.
    Ganesha,
    /// glusterd with a brick of `gv-single` (first Gluster host) and of `gv-replica`
    /// (replica 2 across the first two Gluster hosts).
    Gluster,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    Server,
    Client,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Host {
    /// 1 to 10 characters of a-z, 0-9 and '-' (it names a namespace and a veth).
    pub name: String,
    pub role: Role,
    pub address: Ipv4Addr,
    #[serde(default)]
    pub services: Vec<Service>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Topology {
    pub name: String,
    /// Prefix length of the lab subnet (all hosts share it).
    #[serde(default = "default_prefix")]
    pub prefix_len: u8,
    #[serde(rename = "host")]
    pub hosts: Vec<Host>,
}

fn default_prefix() -> u8 {
    24
}

/// The default topology, as TOML (also the documentation's example).
pub const DEFAULT_TOML: &str = r#"# The seed's Table I: a DFS namespace server, two replica servers, three clients.
name = "dfs"
prefix_len = 24

[[host]]
name = "dfs-ns"
role = "server"
address = "10.10.0.2"
services = ["dfs-root"]

[[host]]
name = "replica1"
role = "server"
address = "10.10.0.3"
services = ["samba", "ganesha", "gluster"]

[[host]]
name = "replica2"
role = "server"
address = "10.10.0.4"
services = ["samba", "gluster"]

[[host]]
name = "pc1"
role = "client"
address = "10.10.0.10"

[[host]]
name = "pc2"
role = "client"
address = "10.10.0.11"

[[host]]
name = "pc3"
role = "client"
address = "10.10.0.12"
"#;

impl Topology {
    pub fn default_lab() -> Topology {
        Topology::parse(DEFAULT_TOML).expect("the built-in topology is valid")
    }

    pub fn load(path: &std::path::Path) -> Result<Topology> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read topology {}", path.display()))?;
        Topology::parse(&text).with_context(|| format!("topology {}", path.display()))
    }

    pub fn parse(text: &str) -> Result<Topology> {
        let t: Topology = toml::from_str(text).map_err(|e| anyhow::anyhow!("{}", e.message()))?;
        t.validate()?;
        Ok(t)
    }

    fn validate(&self) -> Result<()> {
        if !(8..=30).contains(&self.prefix_len) {
            bail!("prefix_len must be between 8 and 30");
        }
        let mut names = std::collections::BTreeSet::new();
        let mut addrs = std::collections::BTreeSet::new();
        for h in &self.hosts {
            let ok = (1..=10).contains(&h.name.len())
                && h.name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
            if !ok {
                bail!(
                    "host name '{}' must be 1-10 characters of a-z, 0-9 and '-'",
                    h.name
                );
            }
            if !names.insert(&h.name) {
                bail!("host name '{}' is used twice", h.name);
            }
            if !addrs.insert(h.address) {
                bail!("address {} is used twice", h.address);
            }
            if h.role == Role::Client && !h.services.is_empty() {
                bail!("client '{}' cannot run services", h.name);
            }
        }
        if !self.hosts.iter().any(|h| h.role == Role::Client) {
            bail!("the topology needs at least one client");
        }
        if self
            .hosts
            .iter()
            .filter(|h| h.services.contains(&Service::Ganesha))
            .count()
            > 1
        {
            bail!("only one host can run ganesha (one rpcbind per lab)");
        }
        Ok(())
    }

    pub fn servers(&self) -> impl Iterator<Item = &Host> {
        self.hosts.iter().filter(|h| h.role == Role::Server)
    }

    pub fn clients(&self) -> impl Iterator<Item = &Host> {
        self.hosts.iter().filter(|h| h.role == Role::Client)
    }

    /// The first host offering `service`.
    pub fn host_with(&self, service: Service) -> Option<&Host> {
        self.hosts.iter().find(|h| h.services.contains(&service))
    }

    /// The same hosts, none of them running `service` (`lab up --no-gluster`).
    pub fn drop_service(&mut self, service: Service) {
        for h in &mut self.hosts {
            h.services.retain(|s| *s != service);
        }
    }

    /// Hosts running glusterd, in topology order.
    pub fn gluster_hosts(&self) -> Vec<Host> {
        self.hosts
            .iter()
            .filter(|h| h.services.contains(&Service::Gluster))
            .cloned()
            .collect()
    }

    /// Hosts serving the replicated shares (Samba), the DFS links' targets.
    pub fn replicas(&self) -> impl Iterator<Item = &Host> {
        self.hosts
            .iter()
            .filter(|h| h.services.contains(&Service::Samba))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_mirrors_table_one() {
        let t = Topology::default_lab();
        assert_eq!(t.servers().count(), 3);
        assert_eq!(t.clients().count(), 3);
        assert_eq!(t.host_with(Service::Ganesha).unwrap().name, "replica1");
        assert_eq!(t.replicas().count(), 2);
    }

    #[test]
    fn without_gluster_the_other_services_stay() {
        let mut t = Topology::default_lab();
        t.drop_service(Service::Gluster);
        assert!(t.gluster_hosts().is_empty());
        assert_eq!(t.replicas().count(), 2);
        assert_eq!(t.host_with(Service::Ganesha).unwrap().name, "replica1");
        assert!(t.validate().is_ok());
    }

    #[test]
    fn rejects_bad_topologies() {
        let bad = [
            DEFAULT_TOML.replace("pc3", "pc1"),
            DEFAULT_TOML.replace("10.10.0.12", "10.10.0.11"),
            DEFAULT_TOML.replace("\"pc1\"", "\"Way-Too-Long-Name\""),
            DEFAULT_TOML.replace("prefix_len = 24", "prefix_len = 40"),
            "name = \"x\"\n[[host]]\nname=\"a\"\nrole=\"server\"\naddress=\"10.0.0.1\"\n"
                .to_string(),
            "name = \"x\"\n[[host]]\nname=\"a\"\nrole=\"client\"\naddress=\"nope\"\n".to_string(),
        ];
        for text in bad {
            assert!(Topology::parse(&text).is_err(), "accepted:\n{text}");
        }
    }
}
