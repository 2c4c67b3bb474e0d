//! Structural Verilog for the board top: module port lists (of the vendor IP, or read back from
//! the Verilog rust-hdl generated) and instances whose connections are checked against them: a
//! connection to a port the module lacks, or an input left open, is an error, not a netlist that
//! Quartus rejects an hour later.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::ip::{range, Dir, IpBlock, IpPort};

#[derive(Debug, thiserror::Error)]
pub enum NetlistError {
    #[error("module {module} has no port {port} (instance {instance})")]
    NoSuchPort {
        module: String,
        instance: String,
        port: String,
    },
    #[error("instance {instance} of {module} leaves inputs open: {ports}")]
    OpenInputs {
        module: String,
        instance: String,
        ports: String,
    },
    #[error("no port list for module {0} in the generated Verilog")]
    NoModule(String),
}

/// The ports of module `module` in Verilog written by rust-hdl (`input wire [w:0] name;` lines
/// after the module header).
pub fn ports_of_generated(verilog: &str, module: &str) -> Result<Vec<IpPort>, NetlistError> {
    let header = format!("module {module}(");
    let start = verilog
        .find(&header)
        .ok_or_else(|| NetlistError::NoModule(module.into()))?;
    let mut ports = vec![];
    for line in verilog[start..].lines().skip(1) {
        let line = line.trim();
        if line.starts_with("endmodule") {
            break;
        }
        let dir = if let Some(rest) = line.strip_prefix("input ") {
            (Dir::In, rest)
        } else if let Some(rest) = line.strip_prefix("output ") {
            (Dir::Out, rest)
        } else {
            continue;
        };
        let rest = dir
            .1
            .trim_start_matches("wire")
            .trim_start_matches("reg")
            .trim();
        let (width, name) = match rest.strip_prefix('[') {
            Some(r) => {
                let (msb, name) = r.split_once(":0]").unwrap_or(("0", r));
                (msb.parse::<usize>().unwrap_or(0) + 1, name)
            }
            None => (1, rest),
        };
        ports.push(IpPort {
            name: name.trim().trim_end_matches(';').to_string(),
            dir: dir.0,
            width,
        });
    }
    Ok(ports)
}

/// An instance being wired.
pub struct Instance<'a> {
    module: &'a str,
    name: String,
    ports: &'a [IpPort],
    conns: BTreeMap<String, String>,
    errors: Vec<NetlistError>,
}

impl<'a> Instance<'a> {
    pub fn of(block: &'a IpBlock, name: &str) -> Self {
        Self::new(&block.module, &block.ports, name)
    }

    pub fn new(module: &'a str, ports: &'a [IpPort], name: &str) -> Self {
        Self {
            module,
            name: name.into(),
            ports,
            conns: BTreeMap::new(),
            errors: vec![],
        }
    }

    /// Connects `port` to the expression `expr`.
    pub fn c(&mut self, port: &str, expr: impl Into<String>) -> &mut Self {
        if self.ports.iter().any(|p| p.name == port) {
            self.conns.insert(port.to_string(), expr.into());
        } else {
            self.errors.push(NetlistError::NoSuchPort {
                module: self.module.into(),
                instance: self.name.clone(),
                port: port.into(),
            });
        }
        self
    }

    /// Connects every input not connected yet to zero (control inputs a design does not use).
    pub fn tie_off_rest(&mut self) -> &mut Self {
        for p in self.ports.iter().filter(|p| p.dir == Dir::In) {
            self.conns
                .entry(p.name.clone())
                .or_insert_with(|| format!("{}'d0", p.width));
        }
        self
    }

    pub fn width(&self, port: &str) -> usize {
        self.ports
            .iter()
            .find(|p| p.name == port)
            .map_or(0, |p| p.width)
    }

    /// The instance's text; outputs left unconnected appear as `.name()`.
    pub fn render(&mut self) -> Result<String, NetlistError> {
        if let Some(e) = self.errors.drain(..).next() {
            return Err(e);
        }
        let open: Vec<&str> = self
            .ports
            .iter()
            .filter(|p| p.dir == Dir::In && !self.conns.contains_key(&p.name))
            .map(|p| p.name.as_str())
            .collect();
        if !open.is_empty() {
            return Err(NetlistError::OpenInputs {
                module: self.module.into(),
                instance: self.name.clone(),
                ports: open.join(", "),
            });
        }
        let mut s = String::new();
        writeln!(s, "    {} {} (", escape(self.module), escape(&self.name)).unwrap();
        let n = self.ports.len();
        for (i, p) in self.ports.iter().enumerate() {
            let expr = self.conns.get(&p.name).map_or("", |e| e.as_str());
            let comma = if i + 1 < n { "," } else { "" };
            writeln!(s, "        .{}({expr}){comma}", escape(&p.name)).unwrap();
        }
        writeln!(s, "    );").unwrap();
        Ok(s)
    }
}

/// A Verilog identifier as written in a netlist: names with `$` (rust-hdl's) are escaped
/// identifiers (`\name `), which every tool reads the same way.
pub fn escape(name: &str) -> String {
    if name.contains('$') {
        format!("\\{name} ")
    } else {
        name.to_string()
    }
}

/// A wire declaration.
pub fn wire(name: &str, width: usize) -> String {
    format!("    wire {}{};\n", range(width), name)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GENERATED: &str = "\n\nmodule top_thing(a,b$0$c,d);\n    \n    // Module arguments\n    input wire  a;\n    input wire  [63:0] b$0$c;\n    output reg  [2:0] d;\n    wire x;\nendmodule\n";

    #[test]
    fn ports_are_read_back_from_generated_verilog() {
        let p = ports_of_generated(GENERATED, "top_thing").unwrap();
        assert_eq!(
            p,
            vec![
                IpPort {
                    name: "a".into(),
                    dir: Dir::In,
                    width: 1
                },
                IpPort {
                    name: "b$0$c".into(),
                    dir: Dir::In,
                    width: 64
                },
                IpPort {
                    name: "d".into(),
                    dir: Dir::Out,
                    width: 3
                },
            ]
        );
        assert!(ports_of_generated(GENERATED, "other").is_err());
    }

    #[test]
    fn instances_refuse_unknown_ports_and_open_inputs() {
        let p = ports_of_generated(GENERATED, "top_thing").unwrap();
        let mut i = Instance::new("top_thing", &p, "u");
        i.c("a", "1'b1");
        let e = i.render().unwrap_err().to_string();
        assert!(e.contains("leaves inputs open: b$0$c"), "{e}");
        i.c("b$0$c", "64'd0");
        let text = i.render().unwrap();
        assert!(text.contains(".\\b$0$c (64'd0),"), "{text}");
        assert!(text.contains(".d()"), "{text}");
        i.c("nope", "x");
        assert!(i.render().unwrap_err().to_string().contains("no port nope"));
    }
}
