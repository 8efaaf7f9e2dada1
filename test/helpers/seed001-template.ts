/**
 * The Metal3DataTemplate example of seed 001 as YAML (shared by the seed test and the render
 * benchmark). Transcription fixes to the flattened seed text: `Name:` -> `name:`,
 * `IPAddressFromIPPool` -> `ipAddressFromIPPool`, indentation restored. The MAC placeholders
 * `XX:XX:XX:XX:XX:XX` / `YY:YY:YY:YY:YY:YY` are kept verbatim; SEED_TEMPLATE_REAL_MACS has real ones.
 */
export const SEED_TEMPLATE = `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3DataTemplate
metadata:
  name: nodepool-1
  namespace: default
  ownerReferences:
    - apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
      controller: true
      kind: Metal3Cluster
      name: cluster-1
spec:
  templateReference: old-template
  metaData:
    strings:
      - key: abc
        value: def
    objectNames:
      - key: name_m3m
        object: metal3machine
      - key: name_machine
        object: machine
      - key: name_bmh
        object: baremetalhost
    indexes:
      - key: index
        offset: 0
        step: 1
    ipAddressesFromIPPool:
      - key: ip
        name: pool-1
    prefixesFromIPPool:
      - key: ip
        name: pool-1
    gatewaysFromIPPool:
      - key: gateway
        name: pool-1
    dnsServersFromIPPool:
      - key: dns
        name: pool-1
    fromHostInterfaces:
      - key: mac
        interface: "eth0"
    fromLabels:
      - key: label-1
        object: machine
        label: mylabelkey
    fromAnnotations:
      - key: annotation-1
        object: machine
        annotation: myannotationkey
  networkData:
    links:
      ethernets:
        - type: "phy"
          id: "enp1s0"
          mtu: 1500
          macAddress:
            fromAnnotation:
              object: machine
              annotation: primary-mac
        - type: "phy"
          id: "enp2s0"
          mtu: 1500
          macAddress:
            fromHostInterface: "eth1"
      bonds:
        - id: "bond0"
          mtu: 1500
          macAddress:
            string: "XX:XX:XX:XX:XX:XX"
          bondMode: "802.3ad"
          bondLinks:
            - enp1s0
            - enp2s0
      vlans:
        - id: "vlan1"
          mtu: 1500
          macAddress:
            string: "YY:YY:YY:YY:YY:YY"
          vlanID: 1
          vlanLink: bond0
    networks:
      ipv4DHCP:
        - id: "provisioning"
          link: "bond0"
      ipv4:
        - id: "Baremetal"
          link: "vlan1"
          ipAddressFromIPPool: pool-1
          routes:
            - network: "0.0.0.0"
              netmask: 0
              gateway:
                fromIPPool: pool-1
              services:
                dns:
                  - "8.8.4.4"
                dnsFromIPPool: pool-1
      ipv6DHCP:
        - id: "provisioning6"
          link: "bond0"
      ipv6SLAAC:
        - id: "provisioning6slaac"
          link: "bond0"
      ipv6:
        - id: "Baremetal6"
          link: "vlan1"
          ipAddressFromIPPool: pool6-1
          routes:
            - network: "0::0"
              netmask: 0
              gateway:
                string: "2001:0db8:85a3::8a2e:0370:1"
              services:
                dns:
                  - "2001:4860:4860::8844"
                dnsFromIPPool: pool6-1
    services:
      dns:
        - "8.8.8.8"
        - "2001:4860:4860::8888"
status:
  indexes:
    "0": "machine-1"
  dataNames:
    "machine-1": nodepool-1-0
  lastUpdated: "2020-04-02T06:36:09Z"
`;

export const SEED_TEMPLATE_REAL_MACS = SEED_TEMPLATE.replace(
  'XX:XX:XX:XX:XX:XX',
  '00:00:5e:00:53:10',
).replace('YY:YY:YY:YY:YY:YY', '00:00:5e:00:53:11');
