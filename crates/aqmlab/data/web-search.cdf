# Web-search flow sizes: the distribution measured in a production web-search
# cluster by Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010 (Fig. 4,
# background flows), in the tabulated form used by pFabric (Alizadeh et al.,
# SIGCOMM 2013) and distributed with the HPCC traffic generator
# (Li et al., "HPCC: High Precision Congestion Control", SIGCOMM 2019,
# traffic_gen/WebSearch_distribution.txt).
# Columns: flow size in bytes, cumulative percentage of flows at or below it.
# Sizes between two points are interpolated linearly.
0 0
10000 15
20000 20
30000 30
50000 40
80000 53
200000 60
1000000 70
2000000 80
5000000 90
10000000 97
30000000 100
