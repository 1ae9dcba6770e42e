// Package fabric holds the tools that discover or walk the whole fabric:
// ibnetdiscover, iblinkinfo, ibnodes (ibhosts, ibswitches, ibrouters),
// ibprint*, ibroute, dump_lfts and dump_mfts, ibtracert, check_lft_balance,
// ibfindnodesusing, ibidsverify, subnet_diff, set_port_state,
// init_all_ports, ibcacheedit and ibutils' ibdmchk (routing checks from
// opensm's dumps or the live fabric).
package fabric
