//! DescribeCluster (KIP-700) at versions 0-2 on one connection: what a
//! server answers the default request, one asking for the cluster's
//! authorized operations, one for fenced brokers too (v2), and one for
//! each endpoint type it is not (the controller's, an unknown one), as
//! lines that leave out what two clusters cannot share (the cluster id,
//! the ports, Kafka's random controller).

use kafka_protocol::messages::DescribeClusterRequest;

use crate::wire::Conn;

pub fn answers(port: u16) -> Vec<String> {
    let mut conn = Conn::connect(port, "admin");
    let mut lines = Vec::new();
    for version in 0..=2i16 {
        let mut asks = vec![
            ("plain", DescribeClusterRequest::default()),
            (
                "operations",
                DescribeClusterRequest::default().with_include_cluster_authorized_operations(true),
            ),
        ];
        if version >= 1 {
            asks.push((
                "controller endpoint",
                DescribeClusterRequest::default().with_endpoint_type(2),
            ));
            asks.push((
                "unknown endpoint",
                DescribeClusterRequest::default().with_endpoint_type(7),
            ));
        }
        if version >= 2 {
            asks.push((
                "fenced too",
                DescribeClusterRequest::default().with_include_fenced_brokers(true),
            ));
        }
        for (what, request) in asks {
            let r = conn
                .call(&request, version)
                .unwrap_or_else(|| panic!("DescribeCluster v{version} {what}: no answer"));
            let mut ids: Vec<i32> = r.brokers.iter().map(|b| b.broker_id.0).collect();
            ids.sort();
            let hosts: Vec<String> = r.brokers.iter().map(|b| b.host.to_string()).collect();
            let fenced = r.brokers.iter().filter(|b| b.is_fenced).count();
            lines.push(format!(
                "v{version} {what}: error {} {:?}, endpoint {}, cluster id given {}, brokers {ids:?} on {:?}, \
                 {fenced} fenced, controller among them {}, operations {}",
                r.error_code,
                r.error_message.as_ref().map(|m| m.to_string()),
                r.endpoint_type,
                !r.cluster_id.is_empty(),
                hosts.first(),
                ids.contains(&r.controller_id.0),
                r.cluster_authorized_operations
            ));
        }
    }
    lines
}
