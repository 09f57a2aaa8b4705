#ifndef MS_COMMANDS_H
#define MS_COMMANDS_H

int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_maps(int argc, char **argv);
int cmd_timeline(int argc, char **argv);
int cmd_watch(int argc, char **argv);
int cmd_hugepages(int argc, char **argv);
int cmd_unmapped(int argc, char **argv);
int cmd_heatmap(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_setup(int argc, char **argv);
int cmd_index(int argc, char **argv);


#endif
