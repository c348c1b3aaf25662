// Sample levels and boards for the page's pickers: data only.
// Sokoban levels: a selection from David W. Skinner's Microban and the original XSokoban
// (Hiroyuki Imabayashi / Thinking Rabbit), as in benches/data/.
export const SOKOBAN_SAMPLES = [
  { name: "Microban 1", level: "####\n# .#\n#  ###\n#*@  #\n#  $ #\n#  ###\n####" },
  { name: "Microban 2", level: "######\n#    #\n# #@ #\n# $* #\n# .* #\n#    #\n######" },
  { name: "Microban 3", level: "  ####\n###  ####\n#     $ #\n# #  #$ #\n# . .#@ #\n#########" },
  { name: "Microban 4", level: "########\n#      #\n# .**$@#\n#      #\n#####  #\n    ####" },
  { name: "Microban 5", level: " #######\n #     #\n # .$. #\n## $@$ #\n#  .$. #\n#      #\n########" },
  { name: "Microban 10", level: "      #####\n      #.  #\n      #.# #\n#######.# #\n# @ $ $ $ #\n# # # # ###\n#       #\n#########" },
  { name: "Microban 34", level: "  ####\n###  ####\n#       #\n#@$***. #\n#       #\n#########" },
  { name: "Microban 100", level: "#######\n# @#  #\n#.$   #\n#. # $##\n#.$#   #\n#. # $ #\n#  #   #\n########" },
  { name: "Microban 155", level: "    ######               ####\n#####*#  #################  ##\n#   ###                      #\n#        ########  ####  ##  #\n### ####     #  ####  ####  ##\n#*# # .# # # #     #     #   #\n#*# #  #     # ##  # ##  ##  #\n###    ### ###  # ##  # ##  ##\n #   # #*#      #     # #    #\n #   # ###  #####  #### #    #\n #####   #####  ####### ######\n #   # # #**#               #\n## # #   #**#  #######  ##  #\n#    #########  #    ##### ###\n# #             # $        #*#\n#   #########  ### @#####  #*#\n#####       #### ####   ######" },
  { name: "XSokoban 1", level: "    #####\n    #   #\n    #$  #\n  ###  $##\n  #  $ $ #\n### # ## #   ######\n#   # ## #####  ..#\n# $  $          ..#\n##### ### #@##  ..#\n    #     #########\n    #######" },
  { name: "XSokoban 2", level: "############\n#..  #     ###\n#..  # $  $  #\n#..  #$####  #\n#..    @ ##  #\n#..  # #  $ ##\n###### ##$ $ #\n  # $  $ $ $ #\n  #    #     #\n  ############" },
  { name: "XSokoban 3", level: "        ########\n        #     @#\n        # $#$ ##\n        # $  $#\n        ##$ $ #\n######### $ # ###\n#....  ## $  $  #\n##...    $  $   #\n#....  ##########\n########" },
];

// Sliding boards: row-major tiles, 0 the blank. Korf's instances use his blank-first goal.
export const SLIDING_PRESETS = [
  { name: "Hardest 8-puzzle (31 moves)", tiles: [8, 6, 7, 2, 5, 4, 3, 0, 1], cols: 3, goal: "blank-last" },
  { name: "8-puzzle, 31 moves (the other one)", tiles: [6, 4, 7, 8, 5, 0, 3, 2, 1], cols: 3, goal: "blank-last" },
  { name: "Korf #1 (57 moves)", tiles: [14, 13, 15, 7, 11, 12, 9, 5, 6, 0, 2, 1, 4, 8, 10, 3], cols: 4, goal: "blank-first" },
  { name: "Korf #2 (55 moves)", tiles: [13, 5, 4, 10, 9, 12, 8, 14, 2, 3, 7, 1, 0, 15, 11, 6], cols: 4, goal: "blank-first" },
  { name: "Korf #3 (59 moves)", tiles: [14, 7, 8, 2, 13, 11, 10, 4, 9, 12, 5, 0, 3, 6, 1, 15], cols: 4, goal: "blank-first" },
  { name: "Korf #88 (65 moves, long)", tiles: [15, 2, 12, 11, 14, 13, 9, 5, 1, 3, 8, 7, 0, 10, 6, 4], cols: 4, goal: "blank-first" },
];
